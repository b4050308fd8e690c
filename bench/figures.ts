/**
 * The figures a quality bench measured, by name, for `npm run eval`'s JSON
 * report: the same numbers its printed lines show, as numbers. A bench adds
 * them beside its lines (as it adds chart points for --record); the runner
 * takes them after each bench.
 */

export type Figures = { [name: string]: number | string | Figures };

let collected: Figures = {};

/** One figure under `path` (set, mode or class, metric), e.g. ["held-out set", "hybrid", "recall@5"]. */
export function figure(path: readonly string[], value: number | string): void {
  let at = collected;
  for (const name of path.slice(0, -1)) {
    const next = at[name];
    if (typeof next === "object") at = next;
    else at = at[name] = {};
  }
  at[path[path.length - 1]!] = typeof value === "number" ? Number(value.toFixed(4)) : value;
}

/** Everything added since the last call; clears it. */
export function takeFigures(): Figures {
  const out = collected;
  collected = {};
  return out;
}
