import { type Condition, type DataProperty, type LeafCondition, MAX_SUB_CONDITIONS } from "../../kn/types";
import { formsOf, type Mention } from "./mention";

/** A property searched for mentions, and how much a match in it counts. */
export interface SearchField {
  name: string;
  /** The operations its condition_operations list. */
  ops: ReadonlySet<string>;
  /** Text, as opposed to a number or date (a text mention is only compared with text). */
  text: boolean;
  /** One of the instance's names (its display key, or a property named as a name): the relaxed stage searches these. */
  nameLike: boolean;
  /** A match in it counts this much (the display key counts 1). */
  weight: number;
}

const TEXT_TYPES = /char|text|string|keyword/i;
const NAME_LIKE = /name|名称|名字|别名|title|标题/i;
/** A match outside the instance's names counts this much. */
const OTHER_FIELD_WEIGHT = 0.85;
/** A match in a name that is not the display key (an English name, a trade name). */
const OTHER_NAME_WEIGHT = 0.95;
/** Mentions longer than this are questions, not names: no relaxed stage for them (Latin: in letters). */
export const MAX_RELAXED_CHARS = 12;
const MAX_RELAXED_LETTERS = 48;
/** Relaxed queries per mention at most (each one request, all in one round trip). */
const MAX_RELAXED_QUERIES = 8;

/** The properties of a type a mention can be looked up in: text (or numeric) ones with ==, like, match or knn. */
export function searchFieldsOf(properties: readonly DataProperty[], displayKey: string): SearchField[] {
  return properties
    .map((p) => {
      const nameLike = p.name === displayKey || NAME_LIKE.test(`${p.name} ${p.display_name}`);
      return {
        name: p.name,
        ops: new Set(p.condition_operations),
        text: TEXT_TYPES.test(p.type),
        nameLike,
        weight: p.name === displayKey ? 1 : nameLike ? OTHER_NAME_WEIGHT : OTHER_FIELD_WEIGHT,
      };
    })
    .filter((f) => ["==", "like", "match", "knn"].some((op) => f.ops.has(op)));
}

const leaf = (field: string, operation: LeafCondition["operation"], value: LeafCondition["value"]): LeafCondition => ({
  field,
  operation,
  value,
  value_from: "const",
});

/** Every leaf OR-ed, nested so that no node has more than 100 sub-conditions. */
export function anyOf(conditions: Condition[]): Condition | undefined {
  if (conditions.length === 0) return undefined;
  if (conditions.length === 1) return conditions[0];
  if (conditions.length <= MAX_SUB_CONDITIONS) return { operation: "or", sub_conditions: conditions };
  const chunks: Condition[] = [];
  for (let i = 0; i < conditions.length; i += MAX_SUB_CONDITIONS)
    chunks.push(anyOf(conditions.slice(i, i + MAX_SUB_CONDITIONS))!);
  return anyOf(chunks);
}

function allOf(conditions: Condition[]): Condition {
  return conditions.length === 1 ? conditions[0]! : { operation: "and", sub_conditions: conditions };
}

/** A mention that is a number is also compared with numeric properties (by ==). */
function numberOf(m: Mention): number | undefined {
  return /^-?\d+(\.\d+)?$/.test(m.text) ? Number(m.text) : undefined;
}

/** Stage one, exact: a property equal to a written form of a mention. */
export function exactCondition(fields: readonly SearchField[], mentions: readonly Mention[]): Condition | undefined {
  const leaves: Condition[] = [];
  const all = mentions.flatMap(formsOf);
  for (const f of fields) {
    if (!f.ops.has("==")) continue;
    for (const m of all) {
      const n = numberOf(m);
      if (f.text) for (const v of m.variants) leaves.push(leaf(f.name, "==", v));
      else if (n !== undefined) leaves.push(leaf(f.name, "==", n));
    }
  }
  return anyOf(leaves);
}

/**
 * Stage one, direct: what each property supports beyond equality — contains
 * (`like` of each written form), every word contained (`like` per word,
 * AND-ed for a keyword; OR-ed, best pairs first, for questions), full-text
 * `match`, vector `knn` (its k nearest, k being `knnK`). With `budget`, at
 * most that many sub-conditions, the display key and the whole mention first.
 */
export function directCondition(
  fields: readonly SearchField[],
  mentions: readonly Mention[],
  opts: { words: "and" | "or"; knnK: number; budget?: number },
): Condition | undefined {
  const ranked: { condition: Condition; rank: number }[] = [];
  // A mention's alternates rank after every mention itself.
  const all = [...mentions, ...mentions.flatMap((m) => m.alternates.map((a) => a.mention))];
  fields.forEach((f, i) => {
    if (!f.text) return;
    all.forEach((m, k) => {
      const base = i + k;
      if (f.ops.has("match")) ranked.push({ condition: leaf(f.name, "match", m.text), rank: base });
      else if (f.ops.has("like"))
        for (const v of m.variants) ranked.push({ condition: leaf(f.name, "like", v), rank: base });
      if (f.ops.has("knn"))
        ranked.push({
          condition: { ...leaf(f.name, "knn", m.text), limit_key: "k", limit_value: opts.knnK },
          rank: base,
        });
      const op = f.ops.has("match") ? "match" : f.ops.has("like") ? "like" : undefined;
      if (!op || m.tokens.length < 2) return;
      if (opts.words === "and")
        ranked.push({ condition: allOf(m.tokens.map((t) => leaf(f.name, op, t))), rank: base + 0.5 });
      else for (const [j, t] of m.tokens.entries()) ranked.push({ condition: leaf(f.name, op, t), rank: base + 1 + j });
    });
  });
  const kept = ranked
    .map((r, order) => ({ ...r, order }))
    .sort((a, b) => a.rank - b.rank || a.order - b.order)
    .slice(0, opts.budget ?? Infinity)
    .map((r) => r.condition);
  return anyOf(kept);
}

/**
 * Stage two, relaxed: when stage one found nothing convincing, the mention's
 * pieces on the instance's names, with `like` alone (what every platform
 * property allows). Each query asks for all of the pieces but one, so one
 * wrong, missing or extra character still finds the name while each query
 * stays selective: characters for short Chinese mentions (甲亢 → 甲 AND 亢;
 * 帕金深病 → 帕金病, 帕深病, …), all but a quarter of them for longer ones,
 * and the beginnings and ends of words for Latin mentions. Each query is
 * its own request, so a common piece cannot crowd a rare one out.
 */
export function relaxedConditions(fields: readonly SearchField[], m: Mention): Condition[] {
  const names = fields.filter((f) => f.text && f.nameLike && f.ops.has("like"));
  if (names.length === 0 || m.chars.length < 2 || m.chars.length > (m.latin ? MAX_RELAXED_LETTERS : MAX_RELAXED_CHARS))
    return [];
  return pieceSetsOf(m).map(
    (pieces) =>
      anyOf(
        names.map((f) =>
          allOf(
            pieces.map((p) =>
              Array.isArray(p) ? anyOf(p.map((q) => leaf(f.name, "like", q)))! : leaf(f.name, "like", p),
            ),
          ),
        ),
      )!,
  );
}

/**
 * The mention's distinct piece sets, at most MAX_RELAXED_QUERIES: worked out
 * once per mention, since every object type searched asks for them again.
 */
function pieceSetsOf(m: Mention): (string | string[])[][] {
  let sets = pieceSets.get(m);
  if (!sets) {
    const seen = new Set<string>();
    sets = [];
    for (const pieces of m.latin ? latinPieces(m) : hanPieces(m)) {
      const key = JSON.stringify([...pieces].sort());
      if (pieces.length === 0 || seen.has(key)) continue;
      seen.add(key);
      sets.push(pieces);
      if (sets.length === MAX_RELAXED_QUERIES) break;
    }
    pieceSets.set(m, sets);
  }
  return sets;
}

const pieceSets = new WeakMap<Mention, (string | string[])[][]>();

/**
 * All the characters but one (a two-character mention: both, then each
 * alone, since a near-homophone leaves only one), or for longer mentions all
 * but a quarter of them; then each word of a mention of several words (the
 * name inside a longer everyday form: 脑电图 in 脑电图检查); then any of its
 * bigrams.
 */
function hanPieces(m: Mention): (string | string[])[][] {
  const chars = [...new Set(m.chars)];
  const words = m.tokens.length >= 2 ? m.tokens.filter((t) => [...t].length >= 2).map((t) => [t]) : [];
  // Any one of its bigrams: two wrong characters far apart (阿尔兹海默症) still leave some.
  const anyBigram: string[][][] = chars.length >= 4 ? [[[...m.grams]]] : [];
  if (chars.length === 2) return [chars, [chars[0]!], [chars[1]!]];
  if (chars.length <= 7) return [...chars.map((_, i) => chars.filter((__, j) => j !== i)), ...words, ...anyBigram];
  const quarter = Math.ceil(chars.length / 4);
  return [...[0, 1, 2, 3].map((g) => chars.filter((_, j) => Math.floor(j / quarter) !== g)), ...words, ...anyBigram];
}

/** Each word of four letters or more by its first or last four: all of the words but one. */
function latinPieces(m: Mention): (string | string[])[][] {
  const words = m.text
    .normalize("NFKC")
    .toLowerCase()
    .split(/[^a-z0-9]+/)
    .filter((w) => w.length >= 4);
  const pieces = words.map((w) => [w.slice(0, 4), w.slice(-4)]);
  if (pieces.length <= 1) return [pieces];
  return pieces.map((_, i) => pieces.filter((__, j) => j !== i));
}
