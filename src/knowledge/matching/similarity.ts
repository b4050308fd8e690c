/**
 * String similarities the mention score is built from, over code points
 * (so a Chinese character counts one). All are O(|a|·|b|) or better on the
 * short strings names are.
 */

/** Characters the same for a comparison (by default, equal). */
export type SameChar = (x: string, y: string) => boolean;
const equal: SameChar = (x, y) => x === y;

/** Length of the longest common subsequence: how much of `a` appears in `b` in order. */
export function lcsLength(a: readonly string[], b: readonly string[], same: SameChar = equal): number {
  if (a.length === 0 || b.length === 0) return 0;
  let prev = new Uint16Array(b.length + 1);
  let row = new Uint16Array(b.length + 1);
  for (let i = 1; i <= a.length; i++) {
    for (let j = 1; j <= b.length; j++) {
      row[j] = same(a[i - 1]!, b[j - 1]!) ? prev[j - 1]! + 1 : Math.max(prev[j]!, row[j - 1]!);
    }
    [prev, row] = [row, prev];
  }
  return prev[b.length]!;
}

/**
 * Edit distance with adjacent transpositions (optimal string alignment): a
 * missing, extra or swapped character is one edit, a wrong one costs
 * `substitution(x, y)` (1 by default; less for characters that sound alike).
 * Stops early and returns a value over `max` once the distance must exceed it.
 */
export function editDistance(
  a: readonly string[],
  b: readonly string[],
  max = Infinity,
  substitution: (x: string, y: string) => number = unit,
): number {
  if (Math.abs(a.length - b.length) > max) return max + 1;
  let before: number[] = [];
  let prev = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const row = [i];
    let best = i;
    for (let j = 1; j <= b.length; j++) {
      let d = Math.min(
        prev[j]! + 1,
        row[j - 1]! + 1,
        prev[j - 1]! + (a[i - 1] === b[j - 1] ? 0 : substitution(a[i - 1]!, b[j - 1]!)),
      );
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) d = Math.min(d, before[j - 2]! + 1);
      row.push(d);
      best = Math.min(best, d);
    }
    if (best > max) return max + 1;
    before = prev;
    prev = row;
  }
  return prev[b.length]!;
}

function unit(): number {
  return 1;
}

/**
 * Where `a` appears in `b` as a subsequence starting at `b`'s first character
 * (how Chinese abbreviations are formed: 甲亢 from 甲状腺功能亢进症), matched
 * as early as possible: the number of characters from the first to the last
 * matched one, or undefined when `a` is no such subsequence.
 */
export function anchoredSpan(a: readonly string[], b: readonly string[], same: SameChar = equal): number | undefined {
  if (a.length === 0 || b.length === 0 || !same(a[0]!, b[0]!)) return undefined;
  let j = 1;
  for (let i = 1; i < a.length; i++) {
    while (j < b.length && !same(b[j]!, a[i]!)) j++;
    if (j === b.length) return undefined;
    j++;
  }
  return j;
}

/** Dice coefficient of two bigram sets: 2·|shared| / (|a| + |b|). */
export function dice(a: ReadonlySet<string>, b: ReadonlySet<string>): number {
  if (a.size === 0 || b.size === 0) return 0;
  let shared = 0;
  for (const g of a) if (b.has(g)) shared++;
  return (2 * shared) / (a.size + b.size);
}
