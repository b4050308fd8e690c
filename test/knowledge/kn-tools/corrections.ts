/**
 * The corrected conditions an error's hint offers, read back from its text
 * (`Corrected: <path> = <json>; <path> = <json>. …`), and a condition with
 * one of them put in place: what an agent does with the hint.
 */

export interface Correction {
  path: string;
  value: unknown;
}

/** Every `<path> = <json>` after "Corrected: "; none when the hint offers none. */
export function correctionsIn(hint: string): Correction[] {
  const start = hint.indexOf("Corrected: ");
  if (start < 0) return [];
  const found: Correction[] = [];
  let at = start + "Corrected: ".length;
  for (;;) {
    const eq = hint.indexOf(" = ", at);
    if (eq < 0) throw new Error(`no " = " after ${hint.slice(at)}`);
    const path = hint.slice(at, eq);
    const end = jsonEnd(hint, eq + 3);
    found.push({ path, value: JSON.parse(hint.slice(eq + 3, end)) });
    if (hint.startsWith("; ", end)) at = end + 2;
    else if (hint[end] === ".") return found;
    else throw new Error(`unexpected text after a correction: ${hint.slice(end)}`);
  }
}

/** Where the JSON object or array starting at `from` ends (strings may hold brackets). */
function jsonEnd(text: string, from: number): number {
  let depth = 0;
  let inString = false;
  for (let i = from; i < text.length; i++) {
    const ch = text[i];
    if (inString) {
      if (ch === "\\") i++;
      else if (ch === '"') inString = false;
    } else if (ch === '"') inString = true;
    else if (ch === "{" || ch === "[") depth++;
    else if (ch === "}" || ch === "]") {
      depth--;
      if (depth === 0) return i + 1;
    }
  }
  throw new Error(`unterminated JSON in ${text.slice(from)}`);
}

/** `condition` with the node at `path` (rooted at `root`, e.g. "condition") replaced by `value`. */
export function withCorrection(root: string, condition: unknown, path: string, value: unknown): unknown {
  if (path === root) return value;
  if (!path.startsWith(`${root}.`)) throw new Error(`${path} is not under ${root}`);
  const copy = structuredClone(condition) as Record<string, unknown>;
  const steps = [...path.slice(root.length + 1).matchAll(/([a-z_]+)\[(\d+)\]/g)].map((m) => [m[1]!, Number(m[2])]);
  let node: Record<string, unknown> = copy;
  steps.forEach(([key, index], i) => {
    const list = node[key as string] as Record<string, unknown>[];
    if (i === steps.length - 1) list[index as number] = value as Record<string, unknown>;
    else node = list[index as number]!;
  });
  return copy;
}
