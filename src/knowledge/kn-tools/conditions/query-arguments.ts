import { z } from "zod";
import { zodText } from "../../../errors/text";

/** Arguments both instance tools take. */

/** Sort keys one query may give. */
export const MAX_SORT_KEYS = 10;

/** One sort key: a data property (or _score), asc (the default) or desc. */
export const sortInput = z
  .object({
    field: z
      .string()
      .trim()
      .min(1, zodText("required: a data property or _score", "必填：数据属性或 _score"))
      .describe("数据属性名，或 _score（相关度）"),
    direction: z
      .string()
      .optional()
      .meta({ enum: ["asc", "desc"], description: "asc（默认）或 desc" }),
  })
  .strict();

/** The network: the argument, else the x-kn-id header (knIdOf). */
export const knIdArgument = z
  .string()
  .trim()
  .default("")
  .describe("业务知识网络 ID（如 kn_medical）；不填则用连接的 x-kn-id 头");
