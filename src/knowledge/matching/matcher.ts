import type { CallContext } from "../../core/call-context";
import { type Lexicon, lexiconOrNone, loadLexicon } from "../../core/lexicon";
import { comparable, textOf } from "../../core/text";
import { type Language, type Text, text } from "../../errors/text";
import { ToolError } from "../../errors/tool-error";
import type { KnowledgeNetworkBackend } from "../../kn/backend";
import type { Condition, ObjectQueryResult, RelationTypePath, Row, SubgraphObject } from "../../kn/types";
import type { Embedder } from "../../upstream/embeddings";
import type { AliasLink } from "./aliases";
import type { CandidateMatch, MentionMatch } from "./candidates";
import { type Alternate, formsOf, type Mention } from "./mention";
import { nearness, swapsWords, toldApartByDictionary, unlikeSubstitutions } from "./near-names";
import { anyOf, directCondition, exactCondition, relaxedConditions, type SearchField } from "./queries";
import { type MatchType, MENTION_THRESHOLD, type MentionScore, scoreValue, shorterOrLonger } from "./score";
import { bySemantics } from "./semantic";

/** The object type searched, as the session recorded it. */
export interface MatchTarget {
  kn_id: string;
  object_type_id: string;
  /** Its alias links (none for a session recorded before they were). */
  alias_links: readonly AliasLink[];
}

export interface MatchOptions {
  /** The properties searched, with their weights. */
  fields: readonly SearchField[];
  /** Instances fetched per stage at most, before local scoring. */
  candidateLimit: number;
  /** Instances the exact query fetches at most. */
  exactLimit: number;
  /** Words of a mention AND-ed (a keyword) or OR-ed (a question). */
  words: "and" | "or";
  /** Sub-conditions of the direct query at most (kn_search's max_semantic_sub_conditions). */
  budget?: number;
  /** Stage one is conclusive for a mention when its best match reaches this; else the relaxed stage runs. */
  conclusive: number;
  /**
   * An embeddings endpoint (not the local lexical embedder): candidates that only the platform's
   * full-text or vector search found are checked against the mention by meaning, and close
   * candidates ordered by it (semantic.ts).
   */
  embedder?: Embedder;
  /**
   * CC-CEDICT (core/lexicon.ts), asked only when a candidate to be returned is a near name of the
   * mention (near-names.ts): whether the dictionary knows the two as different words. By default the
   * process's copy, loaded once on first use and shared with every other user of it.
   */
  lexicon?: () => Promise<Lexicon>;
}

export interface MatchOutcome {
  candidates: CandidateMatch[];
  /** Instances the direct query matched in all (its total_count), for "too many" warnings. */
  total: number;
  /** A stage fetched fewer instances than matched its query. */
  cut: boolean;
  /** 1, or 2 when the relaxed stage ran. */
  stages: number;
  /** Lookups that failed while others answered. */
  failures: { lookup: Lookup; error: ToolError }[];
}

type Lookup = "exact" | "direct" | "aliases" | "relaxed" | "names" | "semantic";

const LOOKUP_NAMES: Record<Lookup, Text> = {
  exact: text("exact", "精确"),
  direct: text("direct", "直接"),
  aliases: text("aliases", "别名"),
  relaxed: text("relaxed", "放宽"),
  names: text("names", "名称"),
  semantic: text("semantic", "语义"),
};

/** A failed lookup, for a warning in the caller's language. */
export function lookupFailed(
  f: { lookup: Lookup; error: ToolError },
  objectTypeId: string,
  language: Language,
): string {
  const name = LOOKUP_NAMES[f.lookup];
  return text(
    `the ${name.en} lookup of ${objectTypeId} failed: ${f.error.text.en}`,
    `${objectTypeId} 的${name.zh}查找失败：${f.error.text.zh}`,
  )[language];
}

/**
 * Finds the instances of one object type that mentions name, within what
 * each property allows, strongest evidence first. Stage one asks, side by
 * side, for the exact written forms (==), the mention contained or its words
 * (like, match, knn) and the aliases (a subgraph walk from the alias type);
 * when that leaves a mention without a convincing match, stage two asks for
 * its pieces (relaxedConditions) — at most one more round trip. Every
 * candidate is scored here, on normalised text (score.ts). A lookup that
 * fails while another answered is reported in `failures`; when neither the
 * exact nor the direct lookup answered, their error is thrown (never an
 * empty result).
 */
export async function matchInstances(
  backend: KnowledgeNetworkBackend,
  ctx: CallContext,
  target: MatchTarget,
  mentions: readonly Mention[],
  opts: MatchOptions,
): Promise<MatchOutcome> {
  const found = new Map<string, Found>();
  const failures: MatchOutcome["failures"] = [];
  let total = 0;
  let cut = false;
  const exact = exactCondition(opts.fields, mentions);
  const direct = directCondition(opts.fields, mentions, {
    words: opts.words,
    knnK: opts.candidateLimit,
    budget: opts.budget,
  });
  const aliasPaths = target.alias_links.flatMap((link) =>
    aliasPath(target, link, aliasCondition(link, mentions), opts.candidateLimit),
  );
  if (!exact && !direct && aliasPaths.length === 0) throw notSearchable(target.object_type_id);

  const [exactRows, directRows, aliasRows] = await Promise.allSettled([
    exact ? query(backend, ctx, target, exact, opts.exactLimit) : undefined,
    direct ? query(backend, ctx, target, direct, opts.candidateLimit, true) : undefined,
    aliasPaths.length > 0 ? aliasQuery(backend, ctx, target, aliasPaths) : undefined,
  ]);
  // The instance's own properties decide "no match": when neither the exact nor the direct lookup
  // answered, nothing can tell "no match" from "could not look", and that is an error.
  const ownAnswered = [exactRows, directRows].some((r) => r.status === "fulfilled" && r.value !== undefined);
  for (const [lookup, r] of [
    ["exact", exactRows],
    ["direct", directRows],
    ["aliases", aliasRows],
  ] as const) {
    if (r.status === "fulfilled") continue;
    if (!(r.reason instanceof ToolError) || (!ownAnswered && lookup !== "aliases")) throw r.reason;
    failures.push({ lookup, error: r.reason });
  }
  if (exactRows.status === "fulfilled" && exactRows.value) addRows(found, exactRows.value.datas);
  if (directRows.status === "fulfilled" && directRows.value) {
    const r = directRows.value;
    addRows(found, r.datas);
    total = r.total_count ?? r.datas.length;
    cut = total > r.datas.length;
  }
  if (aliasRows.status === "fulfilled" && aliasRows.value) addAliases(found, aliasRows.value);

  // The dictionary, when an earlier call has loaded it; else asked for below only if a near name needs it.
  const dictionary = opts.lexicon ?? processLexicon;
  let lexicon = loadedLexicons.get(dictionary);
  let candidates = scoreAll(found, mentions, opts.fields, { lexicon });
  const unsure = mentions
    .map((_, k) => k)
    .filter((k) => !candidates.some((c) => (c.mentions[k]?.confidence ?? 0) >= opts.conclusive));
  let stages = 1;
  if (unsure.length > 0) {
    const relaxed = unsure.flatMap((k) => relaxedConditions(opts.fields, mentions[k]!));
    // Each relaxed query its share of the candidate budget: a common piece cannot take it all.
    const perQuery = Math.max(20, Math.ceil(opts.candidateLimit / Math.max(1, relaxed.length)));
    const relaxedAliases = target.alias_links.flatMap((link) =>
      unsure.flatMap((k) =>
        relaxedConditions(link.alias_fields.map(aliasField), mentions[k]!).flatMap((c) =>
          aliasPath(target, link, c, perQuery),
        ),
      ),
    );
    if (relaxed.length > 0 || relaxedAliases.length > 0) {
      stages = 2;
      const results = await Promise.allSettled([
        ...relaxed.map((c) => query(backend, ctx, target, c, perQuery, true)),
        ...(relaxedAliases.length > 0 ? [aliasQuery(backend, ctx, target, relaxedAliases)] : []),
      ]);
      results.forEach((r, i) => {
        if (r.status === "rejected") {
          if (!(r.reason instanceof ToolError)) throw r.reason;
          failures.push({ lookup: "relaxed", error: r.reason });
        } else if (i < relaxed.length) {
          const q = r.value as ObjectQueryResult;
          addRows(found, q.datas);
          if ((q.total_count ?? q.datas.length) > q.datas.length) cut = true;
        } else addAliases(found, r.value as AliasHit[]);
      });
      candidates = scoreAll(found, mentions, opts.fields, { lexicon });
    }
  }
  // A near name with a character the lookups have not seen in any name: ask whether the network uses it.
  let alsoUsed: ReadonlySet<string> = new Set();
  const unseen = unseenSubstitutes(found, mentions, opts.fields, candidates);
  if (unseen.length > 0) {
    const probes = await Promise.allSettled(unseen.map((c) => namesWith(backend, ctx, target, opts.fields, c)));
    const names = new Set<string>();
    probes.forEach((r, i) => {
      if (r.status === "fulfilled") {
        if (r.value) names.add(unseen[i]!);
      } else {
        if (!(r.reason instanceof ToolError)) throw r.reason;
        failures.push({ lookup: "names", error: r.reason });
      }
    });
    if (names.size > 0) {
      alsoUsed = names;
      candidates = scoreAll(found, mentions, opts.fields, { alsoUsed, lexicon });
    }
  }
  // Something to return, and a near name among the names found: the dictionary may tell the two apart.
  if (!lexicon && nearNameAmong(found, mentions, opts.fields, candidates)) {
    lexicon = await lexiconOrNone(dictionary, ctx.log, "near names are told from misspellings without the dictionary");
    if (lexicon) {
      loadedLexicons.set(dictionary, lexicon);
      candidates = scoreAll(found, mentions, opts.fields, { alsoUsed, lexicon });
    }
  }
  if (opts.embedder) {
    try {
      await bySemantics(ctx, opts.embedder, mentions, candidates, opts.fields);
    } catch (err) {
      if (!(err instanceof ToolError)) throw err;
      failures.push({ lookup: "semantic", error: err });
    }
  }
  return { candidates, total, cut, stages, failures };
}

/** The process's CC-CEDICT (core/lexicon.ts: one load per process, shared with its other users). */
const processLexicon = () => loadLexicon();
/** The dictionaries loaded so far, by loader: a call after the first scores with it at once. */
const loadedLexicons = new WeakMap<() => Promise<Lexicon>, Lexicon>();

interface AliasHit {
  row: Row;
  relation: string;
  field: string;
  name: string;
}

interface Found {
  row: Row;
  aliases: AliasHit[];
}

function addRows(found: Map<string, Found>, rows: readonly Row[]): void {
  for (const row of rows) {
    const known = found.get(row._instance_id);
    if (!known) found.set(row._instance_id, { row, aliases: [] });
    else if (row["_score"] !== undefined && known.row["_score"] === undefined)
      known.row = { ...known.row, _score: row["_score"] };
  }
}

function addAliases(found: Map<string, Found>, hits: readonly AliasHit[]): void {
  for (const hit of hits) {
    const known = found.get(hit.row._instance_id);
    if (known) known.aliases.push(hit);
    else found.set(hit.row._instance_id, { row: hit.row, aliases: [hit] });
  }
}

/** An alias match counts a little less than the same match on the instance's own name. */
const ALIAS_WEIGHT = 0.95;

/** What scoring knows beyond the candidates: characters the network's names use, and the dictionary. */
interface Knowledge {
  /** Characters some name of the network holds, found by asking (namesWith). */
  alsoUsed?: ReadonlySet<string>;
  lexicon?: Lexicon;
}

function scoreAll(
  found: Map<string, Found>,
  mentions: readonly Mention[],
  fields: readonly SearchField[],
  knowledge: Knowledge = {},
): CandidateMatch[] {
  const best = Math.max(0, ...[...found.values()].map((f) => Number(f.row["_score"] ?? 0)));
  // Built only when some candidate is a near name: most are not, and the set costs every name's characters.
  let usedSet: ReadonlySet<string> | undefined;
  const used = () => (usedSet ??= charactersUsed(found, fields, knowledge.alsoUsed ?? new Set()));
  const names: NameEvidence = { used, lexicon: knowledge.lexicon };
  // Per mention (each form), how near the nearest name it was told apart from is; worked out when first needed.
  const nearestOther = new Map<Mention, number>();
  const otherAt = (m: Mention) => {
    let cost = nearestOther.get(m);
    if (cost === undefined) {
      cost = nearestOtherName(found, fields, m, names);
      nearestOther.set(m, cost);
    }
    return cost;
  };
  // A misspelling or a rewording of this name is nearer to it than to any other name (see nearestOtherName);
  // asked only of a match good enough to be returned.
  const accepted = (m: Mention, value: string, s: MentionScore) =>
    !anotherName(m, value, s.type, names) &&
    !(
      (s.type === "fuzzy" || s.type === "tokens") &&
      s.confidence >= MENTION_THRESHOLD &&
      !shorterOrLonger(m, value) &&
      nearness(m, value).cost > otherAt(m)
    );
  return [...found.values()].map(({ row, aliases }) => ({
    row,
    engine: best > 0 ? Number(row["_score"] ?? 0) / best : 0,
    mentions: mentions.map((m) => {
      let match: MentionMatch | undefined;
      const consider = (type: MatchType, confidence: number, field: string) => {
        if (!match || confidence > match.confidence) match = { type, confidence, fields: [field] };
        else if (confidence === match.confidence && type === match.type && !match.fields.includes(field))
          match.fields.push(field);
      };
      // What was typed, then what it may stand for (the vocabulary's alternates), each weighed.
      const forms: { mention: Mention; weight: number; via?: Alternate["via"] }[] = [
        { mention: m, weight: 1 },
        ...m.alternates,
      ];
      for (const form of forms) {
        const typeOf = (type: MatchType): MatchType => (form.via === "dictionary" ? "alias" : type);
        for (const f of fields) {
          const text = textOf(row[f.name]);
          if (text === undefined || text === "") continue;
          const s = scoreValue(form.mention, text);
          if (s && accepted(form.mention, text, s))
            consider(typeOf(s.type), round(s.confidence * f.weight * form.weight), f.name);
        }
        for (const a of aliases) {
          const s = scoreValue(form.mention, a.name);
          if (s && accepted(form.mention, a.name, s))
            consider("alias", round(s.confidence * ALIAS_WEIGHT * form.weight), `${a.relation}:${a.field}`);
        }
      }
      return match;
    }),
  }));
}

/**
 * The characters the network writes its names with, as far as this lookup
 * has seen them: every searched property and alias name of the instances found.
 */
function charactersUsed(
  found: Map<string, Found>,
  fields: readonly SearchField[],
  alsoUsed: ReadonlySet<string>,
): ReadonlySet<string> {
  const used = new Set<string>(alsoUsed);
  const add = (text: string | undefined) => {
    if (text) for (const c of comparable(text)) used.add(c);
  };
  for (const { row, aliases } of found.values()) {
    for (const f of fields) add(textOf(row[f.name]));
    for (const a of aliases) add(a.name);
  }
  return used;
}

/** What tells a near name from a misspelling of it (anotherName). */
interface NameEvidence {
  /** The characters the network writes its names with (charactersUsed). */
  used: () => ReadonlySet<string>;
  lexicon: Lexicon | undefined;
}

/**
 * A mention that is a name but for a character or two, that names something
 * else (near-names.ts): where a character that sounds nothing like the name's
 * stands, and the network writes its names with that character too (肝纤维化
 * is not 肺纤维化, 三尖瓣狭窄 not 二尖瓣狭窄); or the mention puts other words
 * where the name has words (浅静脉血栓形成 is not 深静脉血栓形成, 髋骨关节炎 not
 * 膝骨关节炎); or the dictionary knows the two for different words (戊型肝炎 is
 * not 乙型肝炎, 慢性鼻炎 not 慢性鼻窦炎). A typo puts a character that sounds
 * alike (帕金深病), or one the network's names do not use and that leaves no
 * word in its place (座疮 for 痤疮), and still matches. A mention holding the
 * name whole, or held in it, is judged on the characters alone: the words
 * around a name are no edit of it.
 */
function anotherName(m: Mention, value: string, type: MatchType, evidence: NameEvidence): boolean {
  if (type === "exact") return false;
  if (unlikeSubstitutions(m, value).some((c) => DESIGNATION.test(c) || evidence.used().has(c))) return true;
  if (type === "contains") return false;
  return swapsWords(m, value) || (evidence.lexicon !== undefined && toldApartByDictionary(m, value, evidence.lexicon));
}

/**
 * How near (nearness's cost) the nearest name of the candidates is that the
 * mention matches but was told apart from (anotherName); Infinity when there
 * is none. A mention that is another name a character from one of the
 * network's names is that other name: it is not, besides, a misspelling or a
 * rewording of a name further away (子宫内膜炎, a character from 子宫内膜癌, is
 * not 子宫内膜异位症 for sharing its words). A shorter or a longer form of a
 * name may be (shorterOrLonger): short forms are near each other (扩心病 and
 * 冠心病, 甲型肝炎 and 乙型肝炎), and each stands for its own long name; 右下腹痛,
 * though not 右上腹痛, is a 腹痛. So may an abbreviation.
 */
function nearestOtherName(
  found: Map<string, Found>,
  fields: readonly SearchField[],
  m: Mention,
  evidence: NameEvidence,
): number {
  let nearest = Number.POSITIVE_INFINITY;
  const check = (text: string | undefined) => {
    if (!text) return;
    const s = scoreValue(m, text);
    if (!s) return;
    const cost = nearness(m, text).cost;
    if (cost < nearest && anotherName(m, text, s.type, evidence)) nearest = cost;
  };
  // Names only: another property's value (an age group, a code) is no name the mention could be.
  const names = fields.filter((f) => f.nameLike);
  for (const { row, aliases } of found.values()) {
    for (const f of names) check(textOf(row[f.name]));
    for (const a of aliases) check(a.name);
  }
  return nearest;
}

/**
 * A letter or digit in a Chinese name designates (维生素E, 2型糖尿病, IgA肾病):
 * another one is another thing, whatever the network's other names use.
 */
const DESIGNATION = /^[a-z0-9]$/;

/**
 * Whether the dictionary could change what is returned (near-names.ts,
 * toldApartByDictionary): some candidate is to be returned on more than an
 * exact match, and some name found is a near name of a mention (within
 * MAX_EDITS, by more than same-sounding characters): either that candidate
 * itself, or a name that would make the mention another name
 * (nearestOtherName).
 */
function nearNameAmong(
  found: Map<string, Found>,
  mentions: readonly Mention[],
  fields: readonly SearchField[],
  candidates: readonly CandidateMatch[],
): boolean {
  if (!candidates.some((c) => c.mentions.some((m) => m && m.type !== "exact" && m.confidence >= MENTION_THRESHOLD)))
    return false;
  const forms = mentions.flatMap(formsOf);
  const near = (text: string | undefined) =>
    text !== undefined &&
    forms.some((m) => {
      const cost = nearness(m, text).cost;
      return cost >= 1 && cost !== Number.POSITIVE_INFINITY;
    });
  const names = fields.filter((f) => f.nameLike);
  for (const { row, aliases } of found.values()) {
    if (names.some((f) => near(textOf(row[f.name]))) || aliases.some((a) => near(a.name))) return true;
  }
  return false;
}

/** Names probed for a character per call at most: a mention is a name, not a paragraph. */
const MAX_PROBES = 6;

/**
 * The characters that would make a candidate another name (anotherName) if
 * the network used them, that no instance found so far shows: for the
 * candidates that match a mention well enough to be returned.
 */
function unseenSubstitutes(
  found: Map<string, Found>,
  mentions: readonly Mention[],
  fields: readonly SearchField[],
  candidates: readonly CandidateMatch[],
): string[] {
  let usedSet: ReadonlySet<string> | undefined;
  const out = new Set<string>();
  const check = (m: Mention, text: string | undefined) => {
    if (!text) return;
    const s = scoreValue(m, text);
    if (!s || s.type === "exact" || s.confidence < MENTION_THRESHOLD) return;
    for (const c of unlikeSubstitutions(m, text)) {
      usedSet ??= charactersUsed(found, fields, new Set());
      if (!usedSet.has(c) && !DESIGNATION.test(c)) out.add(c);
    }
  };
  // Only the best candidates of each mention: a near name is a false positive when it comes first.
  const best = mentions.map((_, k) => Math.max(0, ...candidates.map((c) => c.mentions[k]?.confidence ?? 0)));
  for (const c of candidates) {
    if (!c.mentions.some((m, k) => m && m.confidence >= MENTION_THRESHOLD && m.confidence === best[k])) continue;
    const f = found.get(c.row._instance_id);
    for (const m of mentions.flatMap(formsOf)) {
      for (const field of fields) check(m, textOf(c.row[field.name]));
      for (const a of f?.aliases ?? []) check(m, a.name);
    }
  }
  return [...out].slice(0, MAX_PROBES);
}

/** Whether any instance's name holds the character (one instance asked for). */
async function namesWith(
  backend: KnowledgeNetworkBackend,
  ctx: CallContext,
  target: MatchTarget,
  fields: readonly SearchField[],
  char: string,
): Promise<boolean> {
  const condition = anyOf(
    fields
      .filter((f) => f.text && f.nameLike && f.ops.has("like"))
      // The platform's like is case-sensitive: a letter is asked for in both cases.
      .flatMap((f) =>
        [...new Set([char, char.toUpperCase()])].map((value) => ({
          field: f.name,
          operation: "like" as const,
          value,
          value_from: "const" as const,
        })),
      ),
  );
  if (!condition) return false;
  const r = await query(backend, ctx, target, condition, 1);
  return r.datas.length > 0;
}

const round = (x: number) => Math.round(x * 1000) / 1000;

function query(
  backend: KnowledgeNetworkBackend,
  ctx: CallContext,
  target: MatchTarget,
  condition: Condition,
  limit: number,
  needTotal = false,
) {
  return backend.queryObjects(ctx, target.kn_id, target.object_type_id, {
    condition,
    limit,
    ...(needTotal ? { need_total: true } : {}),
  });
}

function aliasField(f: AliasLink["alias_fields"][number]): SearchField {
  return { name: f.name, ops: new Set(f.condition_operations), text: true, nameLike: true, weight: 1 };
}

/** The alias names equal to, or containing, a written form of a mention. */
function aliasCondition(link: AliasLink, mentions: readonly Mention[]): Condition | undefined {
  const fields = link.alias_fields.map(aliasField);
  const exact = exactCondition(fields, mentions);
  const direct = directCondition(fields, mentions, { words: "and", knnK: 0 });
  return anyOf([exact, direct].filter((c): c is Condition => c !== undefined));
}

/** A walk from the aliases the condition selects to the instances they name. */
function aliasPath(
  target: MatchTarget,
  link: AliasLink,
  condition: Condition | undefined,
  limit: number,
): RelationTypePath[] {
  if (!condition) return [];
  return [
    {
      object_types: [
        { id: link.alias_object_type_id, condition, limit },
        { id: target.object_type_id, limit },
      ],
      relation_types: [
        {
          relation_type_id: link.relation_type_id,
          source_object_type_id: link.alias_object_type_id,
          target_object_type_id: target.object_type_id,
        },
      ],
      limit,
    },
  ];
}

/** One subgraph request for every alias walk; each instance reached with the alias name that reached it. */
async function aliasQuery(
  backend: KnowledgeNetworkBackend,
  ctx: CallContext,
  target: MatchTarget,
  paths: RelationTypePath[],
): Promise<AliasHit[]> {
  const result = await backend.querySubgraph(ctx, target.kn_id, { relation_type_paths: paths });
  const hits: AliasHit[] = [];
  result.entries.forEach((entry, i) => {
    const path = paths[i]!;
    const relation = path.relation_types[0]!.relation_type_id;
    const aliasType = path.object_types[0]!.id;
    for (const p of entry.relation_paths) {
      const rel = p.relations[0];
      if (!rel) continue;
      const ends = [entry.objects[rel.source_object_id], entry.objects[rel.target_object_id]];
      const alias = ends.find((o) => o?.object_type_id === aliasType);
      const named = ends.find((o) => o?.object_type_id === target.object_type_id);
      if (!alias || !named) continue;
      for (const [field, value] of Object.entries(alias.properties)) {
        const name = textOf(value);
        if (name) hits.push({ row: rowOf(named), relation, field, name });
      }
    }
  });
  return hits;
}

function rowOf(o: SubgraphObject): Row {
  return {
    ...o.properties,
    _instance_id: o._instance_id,
    _instance_identity: o._instance_identity,
    _display: o._display,
  };
}

function notSearchable(objectTypeId: string): ToolError {
  return new ToolError({
    code: "failed_precondition",
    reason: "OBJECT_TYPE_NOT_SEARCHABLE",
    message: text(
      `no property of object type ${objectTypeId} supports a text condition (==, like, match or knn), so a keyword cannot be looked up in it`,
      `对象类型 ${objectTypeId} 没有支持文本条件（==、like、match 或 knn）的属性，无法在其中查找关键词`,
    ),
    hint: {
      message: text("Search another object type of the session's schema.", "搜索本会话schema中的其他对象类型。"),
    },
  });
}
