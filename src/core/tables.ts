import type { Json } from "./json";

/**
 * Answers shaped for an LLM to read: arrays of like, flat rows (so TOON can
 * write them as a table), nothing repeated that can be said once.
 */

/** A row's value as a table cell: lists joined with ", ", absent as "". Objects are kept (the row is then not a table row). */
export function cell(value: Json | undefined): Json {
  if (value === undefined || value === null) return "";
  if (Array.isArray(value) && value.every((v) => typeof v !== "object" || v === null))
    return value.map((v) => String(v ?? "")).join(", ");
  return value;
}

/**
 * Rows with every key of any row, in first-seen order, missing cells "": a
 * uniform table. A column empty in every row says nothing and is left out.
 */
export function table(rows: readonly Record<string, Json | undefined>[]): Record<string, Json>[] {
  const cells = rows.map((r) => Object.fromEntries(Object.entries(r).map(([k, v]) => [k, cell(v)])));
  const keys = [...new Set(cells.flatMap((r) => Object.keys(r)))].filter((k) => cells.some((r) => (r[k] ?? "") !== ""));
  return cells.map((r) => Object.fromEntries(keys.map((k) => [k, r[k] ?? ""])));
}

/** The value most rows hold for `key`, when more than one row does: said once instead of in every row. */
export function commonValue(rows: readonly Record<string, Json>[], key: string): Json | undefined {
  const counts = new Map<string, { value: Json; n: number }>();
  for (const r of rows) {
    const k = JSON.stringify(r[key]);
    const c = counts.get(k) ?? { value: r[key]!, n: 0 };
    c.n++;
    counts.set(k, c);
  }
  const best = [...counts.values()].sort((a, b) => b.n - a.n)[0];
  return best && best.n > 1 ? best.value : undefined;
}

/** The object without its empty fields ("", [], {}, null, undefined): nothing said that says nothing. */
export function compact(value: Record<string, Json | undefined>): Record<string, Json> {
  const out: Record<string, Json> = {};
  for (const [k, v] of Object.entries(value)) {
    if (v === undefined || v === null || v === "") continue;
    if (Array.isArray(v) && v.length === 0) continue;
    if (typeof v === "object" && !Array.isArray(v) && Object.keys(v).length === 0) continue;
    out[k] = v;
  }
  return out;
}
