/**
 * Runs `fn` over `items` with at most `limit` calls in flight, keeping the
 * order of the results. Each result is settled on its own (a failure does not
 * stop the others); the caller's signal stops starting new calls.
 */
export async function settleWithLimit<T, R>(
  items: readonly T[],
  limit: number,
  signal: AbortSignal,
  fn: (item: T, index: number) => Promise<R>,
): Promise<PromiseSettledResult<R>[]> {
  const results: PromiseSettledResult<R>[] = new Array(items.length);
  let next = 0;
  const worker = async () => {
    while (next < items.length) {
      const i = next++;
      if (signal.aborted) {
        results[i] = { status: "rejected", reason: signal.reason };
        continue;
      }
      try {
        results[i] = { status: "fulfilled", value: await fn(items[i]!, i) };
      } catch (reason) {
        results[i] = { status: "rejected", reason };
      }
    }
  };
  await Promise.all(Array.from({ length: Math.max(1, Math.min(limit, items.length)) }, worker));
  return results;
}
