/**
 * Splits text holding JSON values one after another (compact or pretty-printed, as curl and
 * buf curl print them) into those values. Stops at the first thing that is not JSON, says
 * where, and gives the text from there on (`rest`, empty when all of it was JSON).
 */
export function parseJsonStream(text: string): { values: unknown[]; problem?: string; rest: string } {
  const values: unknown[] = [];
  let i = 0;
  while (i < text.length) {
    while (i < text.length && /\s/.test(text[i]!)) i++;
    if (i >= text.length) break;
    const start = i;
    let depth = 0;
    let inString = false;
    for (; i < text.length; i++) {
      const c = text[i];
      if (inString) {
        if (c === "\\") i++;
        else if (c === '"') inString = false;
      } else if (c === '"') inString = true;
      else if (c === "{" || c === "[") depth++;
      else if (c === "}" || c === "]") {
        depth--;
        if (depth === 0) {
          i++;
          break;
        }
      } else if (depth === 0) {
        return { values, problem: `not JSON at "${text.slice(start, start + 80)}"`, rest: text.slice(start) };
      }
    }
    try {
      values.push(JSON.parse(text.slice(start, i)));
    } catch (err) {
      return {
        values,
        problem: `not JSON (${(err as Error).message}) at "${text.slice(start, start + 80)}"`,
        rest: text.slice(start),
      };
    }
  }
  return { values, rest: "" };
}
