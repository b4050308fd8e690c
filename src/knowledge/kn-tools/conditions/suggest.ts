import { editDistance } from "../../matching/similarity";

/**
 * The candidates a mistyped name most likely meant, best first, at most
 * `max`: the same name in another case, names containing it or contained in
 * it (`name` for `disease_name`), then names within two edits.
 */
export function closestNames(name: string, candidates: readonly string[], max: number): string[] {
  const wanted = name.toLowerCase();
  if (wanted === "") return [];
  const scored: { candidate: string; score: number }[] = [];
  for (const candidate of candidates) {
    const c = candidate.toLowerCase();
    if (c === wanted) scored.push({ candidate, score: 0 });
    else if (c.includes(wanted) || wanted.includes(c))
      scored.push({ candidate, score: 1 + Math.abs(c.length - wanted.length) / 100 });
    else {
      const d = editDistance([...wanted], [...c], 2);
      if (d <= 2 && d < Math.max(wanted.length, c.length) / 2) scored.push({ candidate, score: 2 + d });
    }
  }
  return scored
    .sort((a, b) => a.score - b.score)
    .slice(0, max)
    .map((s) => s.candidate);
}
