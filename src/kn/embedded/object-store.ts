import type { Json } from "../../core/json";
import { bigrams, normalizeText, textOf, tokenize } from "../../core/text";
import { cosine, embedLocally } from "../../upstream/local-embedder";
import type { InstanceIdentity, ObjectType, Row } from "../types";

/** Operations a data property allows when its bundle declares none, by type. */
const defaultOperations: { types: RegExp; ops: string[] }[] = [
  {
    types: /^(text)$/i,
    ops: [
      "==",
      "!=",
      "in",
      "not_in",
      "like",
      "not_like",
      "regex",
      "exist",
      "not_exist",
      "match",
      "match_phrase",
      "multi_match",
    ],
  },
  {
    types: /^(varchar|char|string|keyword)$/i,
    ops: ["==", "!=", "in", "not_in", "like", "not_like", "regex", "exist", "not_exist"],
  },
  {
    types: /^(int|integer|long|short|byte|float|double|decimal|number|date|datetime|timestamp|time)$/i,
    ops: ["==", "!=", ">", ">=", "<", "<=", "in", "not_in", "range", "out_range", "exist", "not_exist"],
  },
  { types: /^(bool|boolean)$/i, ops: ["==", "!=", "exist", "not_exist"] },
  { types: /^(vector)$/i, ops: ["knn", "exist", "not_exist"] },
];

/** An index a condition needs on a property, built on first use (see ObjectStore.prepare). */
export type IndexNeed = { property: string; kind: "exact" | "texts" | "grams" | "tokens" | "vectors" };

/** Rows an index build handles between two looks at the clock. */
const BUILD_CHUNK = 256;

/** Runs a build to the end at once (a caller that cannot pause). */
function drain<T>(build: Generator<void, T>): T {
  for (;;) {
    const step = build.next();
    if (step.done) return step.value;
  }
}

/** Token statistics of one property, for full-text scoring. */
interface TokenIndex {
  /** Distinct tokens of each row's value. */
  docs: (Set<string> | undefined)[];
  /** Row indexes per token. */
  postings: Map<string, number[]>;
}

/**
 * The instances of one object type, sorted by primary key, with the indexes
 * that make lookups cheap. Indexes are built the first time a property is
 * queried in a way that needs them, so memory goes to what is used:
 * - exact values → rows (==, in);
 * - character bigrams of the normalised text → rows (like: intersect, then verify);
 * - tokens → rows (match, match_phrase, multi_match);
 * - local embeddings (knn).
 */
export class ObjectStore {
  readonly rows: Row[];
  private readonly byKey = new Map<string, number>();
  private readonly allowed = new Map<string, ReadonlySet<string>>();
  private readonly exact = new Map<string, Map<string, number[]>>();
  private readonly grams = new Map<string, Map<string, Int32Array>>();
  /** Posting lists answered whole, as frozen arrays, by property and gram (see gramRows). */
  private readonly gramArrays = new Map<string, Map<string, number[]>>();
  private readonly texts = new Map<string, (string | undefined)[]>();
  private readonly tokens = new Map<string, TokenIndex>();
  private readonly vectors = new Map<string, (Float32Array | undefined)[]>();
  /** Index builds under way (prepare), by kind and property. */
  private readonly pending = new Map<string, Promise<void>>();

  constructor(
    readonly type: ObjectType,
    rawRows: Record<string, Json>[],
  ) {
    const keyed = rawRows.map((raw) => ({ raw, pk: type.primary_keys.map((k) => raw[k] ?? null) }));
    keyed.sort((a, b) => comparePrimaryKeys(a.pk, b.pk));
    this.rows = keyed.map(({ raw, pk }) => {
      const identity: InstanceIdentity = {};
      type.primary_keys.forEach((k, i) => {
        identity[k] = pk[i]!;
      });
      return {
        ...raw,
        _instance_id: `${type.id}-${pk.map((v) => String(v)).join("_")}`,
        _instance_identity: identity,
        _display: raw[type.display_key] ?? null,
      } as Row;
    });
    this.rows.forEach((row, i) => {
      this.byKey.set(keyOf(type.primary_keys.map((k) => row[k] ?? null)), i);
    });
    for (const p of type.data_properties) {
      const declared = p.condition_operations;
      const ops = declared.length > 0 ? declared : (defaultOperations.find((d) => d.types.test(p.type))?.ops ?? []);
      this.allowed.set(p.name, new Set(ops.map((op) => (op === "=" ? "==" : op))));
    }
  }

  get size(): number {
    return this.rows.length;
  }

  /** The row with this identity (every primary key present), or undefined. */
  find(identity: InstanceIdentity): number | undefined {
    return this.byKey.get(keyOf(this.type.primary_keys.map((k) => identity[k] ?? null)));
  }

  /** The row whose primary key value is `key` (a value, or a map of every primary key). */
  findByKey(key: Json): number | undefined {
    if (key !== null && typeof key === "object" && !Array.isArray(key)) return this.find(key);
    return this.type.primary_keys.length === 1 ? this.byKey.get(keyOf([key])) : undefined;
  }

  hasProperty(name: string): boolean {
    return this.allowed.has(name);
  }

  /** The operations a condition may use on `property`. */
  operationsOf(property: string): ReadonlySet<string> {
    return this.allowed.get(property) ?? new Set();
  }

  /** Rows whose `property` equals `value` exactly (strings by their characters, numbers by value). */
  equalTo(property: string, value: Json): readonly number[] {
    let index = this.exact.get(property);
    if (!index) {
      index = drain(this.buildExact(property));
      this.exact.set(property, index);
    }
    return index.get(valueKey(value)) ?? [];
  }

  private *buildExact(property: string): Generator<void, Map<string, number[]>> {
    const index = new Map<string, number[]>();
    for (let i = 0; i < this.rows.length; i++) {
      if (i % BUILD_CHUNK === 0) yield;
      const v = this.rows[i]![property];
      if (v === undefined || v === null) continue;
      const k = valueKey(v);
      const list = index.get(k);
      if (list) list.push(i);
      else index.set(k, [i]);
    }
    return index;
  }

  /**
   * Builds the indexes `needs` names that are not built yet, pausing between
   * chunks of rows (`pause`, as a scan does): on a large store the first
   * like, match or knn on a property builds for seconds, and the event loop
   * runs meanwhile. Calls preparing the same index share one build.
   */
  async prepare(needs: readonly IndexNeed[], pause: () => Promise<void> | undefined): Promise<void> {
    for (const need of needs) {
      if (need.kind === "grams") await this.prepare([{ property: need.property, kind: "texts" }], pause);
      if (this.built(need)) continue;
      const key = `${need.kind} ${need.property}`;
      const shared = this.pending.get(key);
      if (shared) {
        // Another call's build ended with that call (its deadline, its cancel): then build it here.
        await shared.catch(() => (this.built(need) ? undefined : this.runBuild(need, pause)));
        continue;
      }
      const own = this.runBuild(need, pause).finally(() => this.pending.delete(key));
      this.pending.set(key, own);
      await own;
    }
  }

  private built({ property, kind }: IndexNeed): boolean {
    const maps = {
      exact: this.exact,
      texts: this.texts,
      grams: this.grams,
      tokens: this.tokens,
      vectors: this.vectors,
    };
    return maps[kind].has(property);
  }

  private async runBuild(need: IndexNeed, pause: () => Promise<void> | undefined): Promise<void> {
    const { property } = need;
    const build = (() => {
      switch (need.kind) {
        case "exact":
          return this.buildExact(property);
        case "texts":
          return this.buildTexts(property);
        case "grams":
          return this.buildGrams(property);
        case "tokens":
          return this.buildTokens(property);
        case "vectors":
          return this.buildVectors(property);
      }
    })() as Generator<void, unknown>;
    let step = build.next();
    while (!step.done) {
      const wait = pause();
      if (wait) await wait;
      step = build.next();
    }
    // Another caller may have built it at once meanwhile (a caller that cannot pause): keep the first.
    if (this.built(need)) return;
    const value = step.value;
    switch (need.kind) {
      case "exact":
        this.exact.set(property, value as Map<string, number[]>);
        break;
      case "texts":
        this.texts.set(property, value as (string | undefined)[]);
        break;
      case "grams":
        this.grams.set(property, value as Map<string, Int32Array>);
        break;
      case "tokens":
        this.tokens.set(property, value as TokenIndex);
        break;
      case "vectors":
        this.vectors.set(property, value as (Float32Array | undefined)[]);
        break;
    }
  }

  /** The normalised text of every row's `property` (undefined where it has none). */
  normalizedTexts(property: string): readonly (string | undefined)[] {
    let texts = this.texts.get(property);
    if (!texts) {
      texts = drain(this.buildTexts(property));
      this.texts.set(property, texts);
    }
    return texts;
  }

  private *buildTexts(property: string): Generator<void, (string | undefined)[]> {
    const texts: (string | undefined)[] = [];
    for (let i = 0; i < this.rows.length; i++) {
      if (i % BUILD_CHUNK === 0) yield;
      const t = textOf(this.rows[i]![property]);
      texts.push(t === undefined ? undefined : normalizeText(t));
    }
    return texts;
  }

  /** Rows whose normalised `property` contains the normalised `needle`, in row order; the array may be shared (frozen). */
  containing(property: string, needle: string): number[] {
    const texts = this.normalizedTexts(property);
    if (needle === "") return texts.flatMap((t, i) => (t === undefined ? [] : [i]));
    const index = this.gramIndex(property);
    const grams = bigrams(needle);
    // A needle of one or two characters is itself a gram: its posting list is the answer, kept as a
    // frozen array for every later query (the matcher's relaxed lookups send single characters by the
    // dozen, the same ones again and again).
    if (grams.length === 1 && grams[0] === needle) return this.gramRows(property, index, needle);
    // Intersect the posting lists of the needle's grams, rarest first, then verify.
    const lists = grams.map((g) => index.get(g));
    if (lists.some((l) => l === undefined)) return [];
    const sorted = (lists as Int32Array[]).sort((a, b) => a.length - b.length);
    let candidates: ArrayLike<number> = sorted[0]!;
    for (const list of sorted.slice(1, 3)) candidates = intersectSorted(candidates, list);
    const out: number[] = [];
    for (let j = 0; j < candidates.length; j++) {
      const i = candidates[j]!;
      if (texts[i]!.includes(needle)) out.push(i);
    }
    return out;
  }

  /** The rows holding a gram, as a shared frozen array (made from its posting list once). */
  private gramRows(property: string, index: Map<string, Int32Array>, gram: string): number[] {
    let byGram = this.gramArrays.get(property);
    if (!byGram) this.gramArrays.set(property, (byGram = new Map()));
    let rows = byGram.get(gram);
    if (!rows) {
      rows = Object.freeze(Array.from(index.get(gram) ?? [])) as number[];
      byGram.set(gram, rows);
    }
    return rows;
  }

  private gramIndex(property: string): Map<string, Int32Array> {
    let index = this.grams.get(property);
    if (!index) {
      index = drain(this.buildGrams(property));
      this.grams.set(property, index);
    }
    return index;
  }

  private *buildGrams(property: string): Generator<void, Map<string, Int32Array>> {
    const building = new Map<string, number[]>();
    const texts = this.normalizedTexts(property);
    for (let i = 0; i < texts.length; i++) {
      if (i % BUILD_CHUNK === 0) yield;
      const text = texts[i];
      if (text === undefined) continue;
      const grams = new Set([...bigrams(text), ...text]);
      for (const g of grams) {
        const list = building.get(g);
        if (list) list.push(i);
        else building.set(g, [i]);
      }
    }
    const index = new Map<string, Int32Array>();
    let n = 0;
    for (const [g, list] of building) {
      if (++n % BUILD_CHUNK === 0) yield;
      index.set(g, Int32Array.from(list));
    }
    return index;
  }

  /** Token postings and per-row token sets of `property`. */
  tokenIndex(property: string): TokenIndex {
    let index = this.tokens.get(property);
    if (!index) {
      index = drain(this.buildTokens(property));
      this.tokens.set(property, index);
    }
    return index;
  }

  private *buildTokens(property: string): Generator<void, TokenIndex> {
    const postings = new Map<string, number[]>();
    const docs: (Set<string> | undefined)[] = [];
    for (let i = 0; i < this.rows.length; i++) {
      if (i % BUILD_CHUNK === 0) yield;
      const t = textOf(this.rows[i]![property]);
      if (t === undefined) {
        docs.push(undefined);
        continue;
      }
      const set = new Set(tokenize(t));
      for (const token of set) {
        const list = postings.get(token);
        if (list) list.push(i);
        else postings.set(token, [i]);
      }
      docs.push(set);
    }
    return { docs, postings };
  }

  /** Cosine similarity of every row's `property` embedding with `query` (undefined where it has no text). */
  similarities(property: string, query: Float32Array): (number | undefined)[] {
    let vectors = this.vectors.get(property);
    if (!vectors) {
      vectors = drain(this.buildVectors(property));
      this.vectors.set(property, vectors);
    }
    return vectors.map((v) => (v === undefined ? undefined : cosine(v, query)));
  }

  private *buildVectors(property: string): Generator<void, (Float32Array | undefined)[]> {
    const vectors: (Float32Array | undefined)[] = [];
    for (let i = 0; i < this.rows.length; i++) {
      if (i % BUILD_CHUNK === 0) yield;
      const t = textOf(this.rows[i]![property]);
      vectors.push(t === undefined ? undefined : embedLocally(t));
    }
    return vectors;
  }
}

/** A stable map key for a JSON value: numbers and their string forms match, as SQL comparison would. */
export function valueKey(value: Json): string {
  if (typeof value === "number" || typeof value === "boolean") return String(value);
  if (typeof value === "string") return value;
  return JSON.stringify(value);
}

function keyOf(pk: Json[]): string {
  return pk.length === 1 ? valueKey(pk[0]!) : JSON.stringify(pk.map((v) => valueKey(v)));
}

/** Orders values: numbers numerically, everything else by its string form, nulls first. */
export function compareValues(a: Json | undefined, b: Json | undefined): number {
  if (a === b) return 0;
  if (a === null || a === undefined) return -1;
  if (b === null || b === undefined) return 1;
  if (typeof a === "number" && typeof b === "number") return a - b;
  const sa = valueKey(a);
  const sb = valueKey(b);
  return sa < sb ? -1 : sa > sb ? 1 : 0;
}

export function comparePrimaryKeys(a: Json[], b: Json[]): number {
  for (let i = 0; i < a.length; i++) {
    const c = compareValues(a[i], b[i]);
    if (c !== 0) return c;
  }
  return 0;
}

/** The common elements of two ascending lists. */
export function intersectSorted(a: ArrayLike<number>, b: ArrayLike<number>): number[] {
  const out: number[] = [];
  let i = 0;
  let j = 0;
  while (i < a.length && j < b.length) {
    const x = a[i]!;
    const y = b[j]!;
    if (x === y) {
      out.push(x);
      i++;
      j++;
    } else if (x < y) i++;
    else j++;
  }
  return out;
}
