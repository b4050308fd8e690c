import { encode as toToon } from "@toon-format/toon";
import { stringify } from "yaml";
import { z } from "zod";

/** How a tool's answer is written for the caller. */
export const OUTPUT_FORMATS = ["json", "yaml", "toon"] as const;
export type OutputFormat = (typeof OUTPUT_FORMATS)[number];

/**
 * An answer as text: minified JSON; YAML without line folding (long Chinese
 * texts stay on one line); or TOON (https://toonformat.dev), which writes an
 * array of like objects as one header and a row per object — the fewest
 * tokens for an LLM to read, every fact kept (it decodes to the same data).
 */
export function render(value: unknown, format: OutputFormat): string {
  if (format === "json") return JSON.stringify(value);
  if (format === "yaml") return stringify(value, { lineWidth: 0 });
  return toToon(value);
}

/**
 * The `output_format` argument: json, yaml or toon; absent (or "", proto's
 * unset string) means the caller's default — the structured answer over RPC,
 * TOON over MCP.
 */
export const outputFormatField = z
  .preprocess(
    (v) => (v === "" || v === null ? undefined : v),
    z.enum(OUTPUT_FORMATS, { error: 'output_format must be "json", "yaml" or "toon"' }).optional(),
  )
  .describe(
    "回答的写法：toon（MCP 默认，token 最少）、yaml 或 json；三种写法内容相同（同一份紧凑回答：表格化的行，共同的值只写一次）。",
  );
