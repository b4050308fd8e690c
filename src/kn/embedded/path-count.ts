/**
 * How many complete paths a relation_path template has, node and path limits
 * aside: the number the answer's `total_count` reports, so a caller can tell
 * a cut answer from a complete one. Counted backwards over the nodes (paths
 * from each instance to the end = the sum over its next-hop neighbours), so
 * the cost is the number of edges walked, never the number of paths.
 *
 * `onPath[i]`: the instances at node i that lie on some complete path
 * (undefined: every instance); `walks[i]`: edge i, instance → next-hop instances.
 */
export function countPaths(
  onPath: readonly (Set<number> | undefined)[],
  walks: readonly Map<number, number[]>[],
): number {
  const last = onPath.length - 1;
  const allowedLast = onPath[last];
  let ahead: (y: number) => number = (y) => (allowedLast === undefined || allowedLast.has(y) ? 1 : 0);
  let counts = new Map<number, number>();
  for (let i = last - 1; i >= 0; i--) {
    const here = new Map<number, number>();
    const walk = walks[i]!;
    const from = onPath[i] ?? walk.keys();
    for (const x of from) {
      let n = 0;
      for (const y of walk.get(x) ?? []) n += ahead(y);
      if (n > 0) here.set(x, n);
    }
    counts = here;
    const current = here;
    ahead = (y) => current.get(y) ?? 0;
  }
  let total = 0;
  for (const n of counts.values()) total += n;
  return total;
}
