import type { CallContext } from "../../core/call-context";
import { comparable, textOf } from "../../core/text";
import { ToolError } from "../../errors/tool-error";
import type { KnowledgeNetworkBackend } from "../../kn/backend";
import type { Condition, ObjectQueryResult, RelationTypePath, Row, SubgraphObject } from "../../kn/types";
import type { Embedder } from "../../upstream/embeddings";
import type { AliasLink } from "./aliases";
import type { CandidateMatch, MentionMatch } from "./candidates";
import { type Alternate, formsOf, type Mention } from "./mention";
import { anyOf, directCondition, exactCondition, relaxedConditions, type SearchField } from "./queries";
import { type MatchType, MENTION_THRESHOLD, scoreValue, unlikeSubstitutions } from "./score";
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
}

export interface MatchOutcome {
  candidates: CandidateMatch[];
  /** Instances the direct query matched in all (its total_count), for "too many" warnings. */
  total: number;
  /** A stage fetched fewer instances than matched its query. */
  cut: boolean;
  /** 1, or 2 when the relaxed stage ran. */
  stages: number;
  /** Lookups that failed while others answered: "exact", "direct", "aliases", "relaxed". */
  failures: { lookup: string; error: ToolError }[];
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

  let candidates = scoreAll(found, mentions, opts.fields);
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
      candidates = scoreAll(found, mentions, opts.fields);
    }
  }
  // A near name with a character the lookups have not seen in any name: ask whether the network uses it.
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
    if (names.size > 0) candidates = scoreAll(found, mentions, opts.fields, names);
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

function scoreAll(
  found: Map<string, Found>,
  mentions: readonly Mention[],
  fields: readonly SearchField[],
  alsoUsed: ReadonlySet<string> = new Set(),
): CandidateMatch[] {
  const best = Math.max(0, ...[...found.values()].map((f) => Number(f.row["_score"] ?? 0)));
  // Built only when some candidate is a near name: most are not, and the set costs every name's characters.
  let usedSet: ReadonlySet<string> | undefined;
  const used = () => (usedSet ??= charactersUsed(found, fields, alsoUsed));
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
          if (s && !anotherName(form.mention, text, s.type, used))
            consider(typeOf(s.type), round(s.confidence * f.weight * form.weight), f.name);
        }
        for (const a of aliases) {
          const s = scoreValue(form.mention, a.name);
          if (s && !anotherName(form.mention, a.name, s.type, used))
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

/**
 * A mention that is a name but for a character that sounds nothing like the
 * name's, where the network writes its names with that character too, names
 * something else (肝纤维化 is not 肺纤维化, 三尖瓣狭窄 not 二尖瓣狭窄): a typo
 * puts a character that sounds alike (帕金深病), or one the network's names
 * do not use (座疮 for 痤疮), and still matches.
 */
function anotherName(m: Mention, value: string, type: MatchType, used: () => ReadonlySet<string>): boolean {
  if (type === "exact") return false;
  return unlikeSubstitutions(m, value).some((c) => DESIGNATION.test(c) || used().has(c));
}

/**
 * A letter or digit in a Chinese name designates (维生素E, 2型糖尿病, IgA肾病):
 * another one is another thing, whatever the network's other names use.
 */
const DESIGNATION = /^[a-z0-9]$/;

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
    message: `no property of object type ${objectTypeId} supports a text condition (==, like, match or knn), so a keyword cannot be looked up in it`,
    hint: { message: "Search another object type of the session's schema." },
  });
}
