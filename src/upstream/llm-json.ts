import { jsonrepair } from "jsonrepair";

export type JsonObjectRead = { ok: true; value: Record<string, unknown>; repaired: boolean } | { ok: false; problem: string };

/**
 * Reads the JSON object an LLM answered with. A ```json fence wins when there
 * is one (models put an example before the real answer); otherwise the
 * balanced top-level {...} blocks of the text are tried in order, so chatter
 * with braces around the answer does not matter. A block that is almost JSON
 * (single quotes, trailing commas, comments) is repaired with jsonrepair. A
 * top-level array is refused: every caller asks for an object.
 */
export function readJsonObject(text: string): JsonObjectRead {
  const fenced = /```(?:json|JSON)?[ \t]*\r?\n([\s\S]*?)```/.exec(text);
  const source = fenced ? fenced[1]! : text;
  const blocks = topLevelObjects(source);
  if (blocks.length === 0) {
    return { ok: false, problem: /^\s*\[/.test(source) ? "the answer is a JSON array; a JSON object was asked for" : "the answer contains no JSON object" };
  }
  for (const block of blocks) {
    const value = parseObject(block);
    if (value) return { ok: true, value, repaired: false };
  }
  let problem = "";
  for (const block of blocks) {
    try {
      const value = parseObject(jsonrepair(block));
      if (value) return { ok: true, value, repaired: true };
    } catch (err) {
      problem ||= (err as Error).message;
    }
  }
  return { ok: false, problem: `the answer is not valid JSON: ${problem || "no block is a JSON object"}` };
}

function parseObject(s: string): Record<string, unknown> | undefined {
  try {
    const v: unknown = JSON.parse(s);
    return v !== null && typeof v === "object" && !Array.isArray(v) ? (v as Record<string, unknown>) : undefined;
  } catch {
    return undefined;
  }
}

/** The balanced {...} blocks at nesting depth zero, skipping braces inside strings; an unclosed last block runs to the end. */
function topLevelObjects(text: string): string[] {
  const out: string[] = [];
  let depth = 0;
  let start = -1;
  let quote = "";
  for (let i = 0; i < text.length; i++) {
    const c = text[i]!;
    if (quote) {
      if (c === "\\") i++;
      else if (c === quote) quote = "";
      continue;
    }
    if (depth > 0 && (c === '"' || c === "'")) quote = c;
    else if (c === "{") {
      if (depth++ === 0) start = i;
    } else if (c === "}" && depth > 0 && --depth === 0) out.push(text.slice(start, i + 1));
  }
  if (depth > 0) out.push(text.slice(start));
  return out;
}
