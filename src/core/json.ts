import { readFileSync } from "node:fs";
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

/** A failed parse in one line: its first `count` issues, each with the path it is at. */
export function issuesInBrief(error: z.ZodError, count = 3): string {
  return error.issues
    .slice(0, count)
    .map((i) => `${i.path.join(".") || "(top level)"}: ${i.message}`)
    .join("; ");
}

/**
 * A JSON file read and checked with `schema`, or why it cannot be used in one
 * line (unreadable, not JSON, or the first issues of its shape): the callers
 * name the file and what it was for.
 */
export function readJsonFile<S extends z.ZodType>(
  path: string,
  schema: S,
): { ok: true; value: z.output<S> } | { ok: false; why: string } {
  let json: unknown;
  try {
    json = JSON.parse(readFileSync(path, "utf8"));
  } catch (err) {
    return { ok: false, why: (err as Error).message };
  }
  const parsed = schema.safeParse(json);
  return parsed.success ? { ok: true, value: parsed.data } : { ok: false, why: issuesInBrief(parsed.error) };
}

/** Sets `value` at a dot path ("patient.age") inside `target`, creating (or replacing non-objects with) objects on the way. */
export function setAtPath(target: Record<string, Json>, path: string, value: Json): void {
  const parts = path.split(".");
  let node = target;
  for (const part of parts.slice(0, -1)) {
    const next = node[part];
    if (next === null || typeof next !== "object" || Array.isArray(next)) node[part] = {};
    node = node[part] as Record<string, Json>;
  }
  node[parts[parts.length - 1]!] = value;
}
