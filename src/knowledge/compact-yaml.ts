/**
 * The knowledge tools' compact format (data-retrieval-tools §7.1): YAML, fewer
 * tokens than JSON for an LLM to read. Block style, two spaces a level, no
 * line folding (long Chinese texts stay on one line), no anchors or aliases.
 *
 * Written here rather than by a YAML library: the answers are plain JSON data
 * (maps, lists, strings, numbers, booleans, null), and the library's general
 * document model took a third of a keyword-context call. A string is written
 * plain only when it cannot be read back as anything else (another type, a
 * comment, a key, an indicator); otherwise it is double-quoted as JSON writes
 * it, which is valid YAML. test/knowledge/compact-yaml.test.ts reads every
 * shape back with a YAML parser.
 */
export function yaml(value: unknown): string {
  const out: string[] = [];
  if (isBlock(value)) writeBlock(value, "", out);
  else out.push(scalar(value));
  return `${out.join("\n")}\n`;
}

type Block = Record<string, unknown> | unknown[];

/** A map or list with something in it: written over lines, not inline. */
function isBlock(v: unknown): v is Block {
  if (Array.isArray(v)) return v.length > 0;
  return typeof v === "object" && v !== null && entries(v as Record<string, unknown>).length > 0;
}

/** A map's members as JSON has them: undefined and functions left out. */
function entries(map: Record<string, unknown>): [string, unknown][] {
  return Object.entries(map).filter(([, v]) => v !== undefined && typeof v !== "function");
}

/** Writes a non-empty map or list at `indent`, one line per entry, into `out`. */
function writeBlock(value: Block, indent: string, out: string[]): void {
  if (Array.isArray(value)) {
    for (const item of value) {
      const v = item === undefined || typeof item === "function" ? null : item;
      if (!isBlock(v)) {
        out.push(`${indent}- ${scalar(v)}`);
        continue;
      }
      // The item's first line goes after the dash, the rest under it.
      const lines: string[] = [];
      writeBlock(v, `${indent}  `, lines);
      out.push(`${indent}- ${lines[0]!.slice(indent.length + 2)}`, ...lines.slice(1));
    }
    return;
  }
  for (const [k, v] of entries(value)) {
    const key = `${indent}${string(k)}:`;
    if (!isBlock(v)) out.push(`${key} ${scalar(v)}`);
    else {
      out.push(key);
      writeBlock(v, `${indent}  `, out);
    }
  }
}

function scalar(v: unknown): string {
  if (v === null || v === undefined) return "null";
  if (typeof v === "string") return string(v);
  if (typeof v === "number") return Number.isFinite(v) ? String(v) : "null";
  if (typeof v === "boolean") return String(v);
  if (typeof v === "bigint") return String(v);
  if (Array.isArray(v)) return "[]";
  if (typeof v === "object") return "{}";
  return string(String(v));
}

/** An indicator when first (YAML 1.2 §5.3, and `<<`, a merge key to some readers): kept on the safe side. */
const INDICATOR_FIRST = /^(?:[-?:,[\]{}#&*!|>'"%@`]|<<)/;
/** Reads as null, a boolean or a number in YAML 1.2 or 1.1 (yes/no/on/off): such strings are quoted. */
const OTHER_TYPE = /^(?:~|null|true|false|yes|no|on|off|y|n|[-+]?(?:\.?\d.*|\.inf|\.nan|0x.*|0o.*))$/i;
/** Line breaks, tabs, other control characters and BOMs: never plain. */
// biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what it looks for
const CONTROL = /[\u0000-\u001f\u007f-\u009f\u2028\u2029\ufeff]/;

/** A string as a plain scalar when nothing could read it otherwise, else double-quoted (JSON's quoting). */
function string(s: string): string {
  const plain =
    s !== "" &&
    s.trim() === s &&
    !INDICATOR_FIRST.test(s) &&
    !OTHER_TYPE.test(s) &&
    !CONTROL.test(s) &&
    !s.includes(": ") &&
    !s.includes(" #") &&
    !s.endsWith(":");
  return plain ? s : JSON.stringify(s);
}
