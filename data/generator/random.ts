/**
 * A small seeded PRNG (mulberry32) with the few draws the generator needs.
 * Same seed, same sequence, on every platform: the committed sample depends on it.
 */
export class Random {
  private state: number;

  constructor(seed: number) {
    this.state = seed >>> 0;
  }

  /** A float in [0, 1). */
  next(): number {
    this.state = (this.state + 0x6d2b79f5) >>> 0;
    let t = this.state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  }

  /** An integer in [min, max], both included. */
  int(min: number, max: number): number {
    return min + Math.floor(this.next() * (max - min + 1));
  }

  chance(probability: number): boolean {
    return this.next() < probability;
  }

  pick<T>(items: readonly T[]): T {
    if (items.length === 0) throw new Error("pick from an empty list");
    return items[Math.floor(this.next() * items.length)] as T;
  }

  /** Up to `count` distinct items, in draw order. */
  sample<T>(items: readonly T[], count: number): T[] {
    // Few from many (the usual case at scale): rejection, without copying the pool.
    if (count * 4 < items.length) {
      const chosen = new Set<number>();
      while (chosen.size < count) chosen.add(Math.floor(this.next() * items.length));
      return [...chosen].map((i) => items[i] as T);
    }
    // Partial Fisher–Yates on a copy.
    const copy = [...items];
    const n = Math.min(count, copy.length);
    for (let i = 0; i < n; i++) {
      const j = i + Math.floor(this.next() * (copy.length - i));
      [copy[i], copy[j]] = [copy[j] as T, copy[i] as T];
    }
    return copy.slice(0, n);
  }
}
