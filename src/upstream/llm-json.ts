import { jsonrepair } from "jsonrepair";

/**
 * Reads the JSON object an LLM answered with: the outermost {...} of the text
 * (so code fences and chatter around it do not matter), repaired with
 * jsonrepair when it is almost JSON (single quotes, trailing commas, comments).
 * Returns the value, or why it could not be read.
 */
export function readJsonObject(text: string): { ok: true; value: Record<string, unknown>; repaired: boolean } | { ok: false; problem: string } {
  const start = text.indexOf("{");
  const end = text.lastIndexOf("}");
  if (start === -1 || end <= start) return { ok: false, problem: "the answer contains no JSON object" };
  const candidate = text.slice(start, end + 1);
  const parse = (s: string) => {
    const v: unknown = JSON.parse(s);
    if (v === null || typeof v !== "object" || Array.isArray(v)) throw new Error("not a JSON object");
    return v as Record<string, unknown>;
  };
  try {
    return { ok: true, value: parse(candidate), repaired: false };
  } catch {
    try {
      return { ok: true, value: parse(jsonrepair(candidate)), repaired: true };
    } catch (err) {
      return { ok: false, problem: `the answer is not valid JSON: ${(err as Error).message}` };
    }
  }
}
