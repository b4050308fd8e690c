import { z } from "zod";

/** Any JSON value. */
export type Json = string | number | boolean | null | Json[] | { [key: string]: Json };
export const jsonSchema: z.ZodType<Json> = z.lazy(() =>
  z.union([z.string(), z.number(), z.boolean(), z.null(), z.array(jsonSchema), z.record(z.string(), jsonSchema)]),
);

/**
 * A value that came out of JSON.parse: JSON by construction, so it is not
 * walked again (checking large free-form values recursively is costly).
 */
export const parsedJson = z.custom<Json>(() => true);

/**
 * A JSON object that came out of JSON.parse: checked to be an object, its
 * members not walked again. A record schema parses every member of every row
 * of an upstream answer, which was most of the time spent reading one.
 */
export const parsedJsonObject = z.custom<{ [key: string]: Json }>(
  (v) => typeof v === "object" && v !== null && !Array.isArray(v),
  { message: "expected a JSON object" },
);
