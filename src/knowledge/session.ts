import { type Caller, callerKey } from "../core/call-context";
import { text } from "../errors/text";
import { ToolError } from "../errors/tool-error";
import { identityKey } from "../kn/identity";
import type { ActionType, DataProperty, LogicProperty } from "../kn/types";
import { type SessionStore, sessionKey } from "../store/session-store";
import type { KnNode } from "./kn-search/answer";
import type { AliasLink } from "./matching/aliases";

/** An object type as recalled into a session: its definition, network and relevance. */
export interface RecalledObjectType {
  kn_id: string;
  id: string;
  name: string;
  comment: string;
  primary_keys: string[];
  display_key: string;
  data_properties: DataProperty[];
  logic_properties: Pick<LogicProperty, "name" | "display_name" | "type" | "comment">[];
  score: number;
  /** How its instances are named otherwise (absent in sessions recorded before alias links were). */
  alias_links?: AliasLink[];
}

export interface RecalledRelationType {
  kn_id: string;
  id: string;
  name: string;
  comment: string;
  source_object_type_id: string;
  target_object_type_id: string;
  score: number;
}

export interface RecalledActionType extends ActionType {
  kn_id: string;
  object_type_name: string;
}

/** What one RetrieveSchema call recalled. */
export interface SchemaRound {
  round: number;
  query: string;
  kn_ids: string[];
  ranking_method: string;
  object_types: RecalledObjectType[];
  relation_types: RecalledRelationType[];
  action_types: RecalledActionType[];
}

/** The schema of a session: the union of its rounds, latest definition first. */
export interface SessionSchema {
  kn_ids: string[];
  object_types: RecalledObjectType[];
  relation_types: RecalledRelationType[];
  action_types: RecalledActionType[];
  rounds: number;
}

export type SessionType = "" | "redis" | "in_memory";

/**
 * Every piece of a knowledge session — schema rounds, instances returned by
 * keyword context, kn_search rounds — where it lives and how it is keyed: by
 * the caller's account and the session id, so one account never reads
 * another's session. Rounds are appended atomically, so concurrent calls of
 * one session never lose a round, whichever replica serves them.
 */
export class KnowledgeSessions {
  constructor(private readonly stores: { memory: SessionStore; redis: SessionStore | undefined }) {}

  /** The store a call asked for: "redis", "in_memory", or "" for the default (Redis when configured). */
  pick(sessionType: SessionType): SessionStore {
    if (sessionType === "in_memory") return this.stores.memory;
    if (sessionType === "redis") {
      if (!this.stores.redis) {
        throw new ToolError({
          code: "failed_precondition",
          reason: "REDIS_NOT_CONFIGURED",
          message: text(
            'session_type "redis" was asked for, but this service has no Redis (REDIS_URL is not set)',
            '请求了 session_type "redis"，但本服务没有 Redis（未设置 REDIS_URL）',
          ),
          violations: [
            {
              field: "session_type",
              description: text('use "in_memory" or leave it empty', '请用 "in_memory" 或留空'),
            },
          ],
          hint: {
            message: text(
              'Call again with session_type "in_memory" or without session_type.',
              '用 session_type "in_memory" 或不带 session_type 再调用。',
            ),
            validValues: ["in_memory", ""],
          },
        });
      }
      return this.stores.redis;
    }
    return this.stores.redis ?? this.stores.memory;
  }

  /** The session's rounds, oldest first, numbered by their place in the list. */
  async rounds(store: SessionStore, caller: Caller, sessionId: string): Promise<SchemaRound[]> {
    const stored = await store.list<Omit<SchemaRound, "round">>(key(caller, sessionId, "schema_rounds"));
    return stored.map((r, i) => ({ ...r, round: i + 1 }));
  }

  /** Records a round and returns its number (1 for the first); the append itself numbers it, so racing rounds never share one. */
  async addRound(
    store: SessionStore,
    caller: Caller,
    sessionId: string,
    round: Omit<SchemaRound, "round">,
  ): Promise<number> {
    return store.append(key(caller, sessionId, "schema_rounds"), round);
  }

  /**
   * Marks instances as returned in full in this session and returns those that
   * were not yet. Atomic per instance: of concurrent calls returning the same
   * instance, exactly one returns it in full.
   */
  async claimReturned(
    store: SessionStore,
    caller: Caller,
    sessionId: string,
    instanceKeys: string[],
  ): Promise<Set<string>> {
    const fresh = new Set(await store.claim(key(caller, sessionId, "returned_instances"), instanceKeys));
    // A session in use keeps its schema alive as long as its dedup record.
    await store.touch([key(caller, sessionId, "schema_rounds")]);
    return fresh;
  }

  /**
   * Records a kn_search round's nodes and returns what the round answers: with
   * `returnUnion`, every node of the session (this round's first, then earlier
   * rounds', latest first); without, only the nodes no earlier round found.
   * The append numbers the round, so of concurrent rounds each compares itself
   * with exactly the rounds recorded before it.
   */
  async returnNodes(
    store: SessionStore,
    caller: Caller,
    sessionId: string,
    query: string,
    current: KnNode[],
    returnUnion: boolean,
  ): Promise<ReturnedNodes> {
    const k = key(caller, sessionId, "kn_search_nodes");
    const count = await store.append(k, { query, nodes: current } satisfies NodeRound);
    const earlier = (await store.list<NodeRound>(k)).slice(0, count - 1);
    const seen = new Set(earlier.flatMap((r) => r.nodes.map(nodeKey)));
    if (!returnUnion) {
      const fresh = current.filter((n) => !seen.has(nodeKey(n)));
      return { nodes: fresh, seenBefore: current.length - fresh.length };
    }
    const union = new Map(current.map((n) => [nodeKey(n), n]));
    for (const round of [...earlier].reverse())
      for (const n of round.nodes) if (!union.has(nodeKey(n))) union.set(nodeKey(n), n);
    return { nodes: [...union.values()], seenBefore: 0 };
  }
}

/** What one kn_search round of a session found. */
interface NodeRound {
  query: string;
  nodes: KnNode[];
}

export interface ReturnedNodes {
  nodes: KnNode[];
  /** Nodes of this round left out because an earlier round of the session had them (return_union=false). */
  seenBefore: number;
}

/** Merges rounds: one entry per (network, id), the latest round's definition winning. */
export function unionOf(rounds: readonly SchemaRound[]): SessionSchema {
  return merge({ kn_ids: [], object_types: [], relation_types: [], action_types: [], rounds: 0 }, rounds);
}

/** A union with more rounds after it: as unionOf of all of them, without going over the earlier rounds again. */
export function merge(union: SessionSchema, rounds: readonly SchemaRound[]): SessionSchema {
  const byKey = <T extends { kn_id: string; id: string }>(list: readonly T[]) =>
    new Map(list.map((c) => [`${c.kn_id}/${c.id}`, c]));
  const objects = byKey(union.object_types);
  const relations = byKey(union.relation_types);
  const actions = byKey(union.action_types);
  const kns = new Set(union.kn_ids);
  for (const r of rounds) {
    for (const k of r.kn_ids) kns.add(k);
    for (const o of r.object_types) objects.set(`${o.kn_id}/${o.id}`, o);
    for (const rel of r.relation_types) relations.set(`${rel.kn_id}/${rel.id}`, rel);
    for (const a of r.action_types) actions.set(`${a.kn_id}/${a.id}`, a);
  }
  return {
    kn_ids: [...kns],
    object_types: [...objects.values()],
    relation_types: [...relations.values()],
    action_types: [...actions.values()],
    rounds: union.rounds + rounds.length,
  };
}

/** What `round` adds to a session whose schema was `before`: the types `before` does not have. */
export function newSince(
  before: SessionSchema,
  round: Pick<SchemaRound, "object_types" | "relation_types" | "action_types">,
): Pick<SessionSchema, "object_types" | "relation_types" | "action_types"> {
  const known = (list: readonly { kn_id: string; id: string }[]) => new Set(list.map((c) => `${c.kn_id}/${c.id}`));
  const [objects, relations, actions] = [
    known(before.object_types),
    known(before.relation_types),
    known(before.action_types),
  ];
  return {
    object_types: round.object_types.filter((o) => !objects.has(`${o.kn_id}/${o.id}`)),
    relation_types: round.relation_types.filter((r) => !relations.has(`${r.kn_id}/${r.id}`)),
    action_types: round.action_types.filter((a) => !actions.has(`${a.kn_id}/${a.id}`)),
  };
}

function key(caller: Caller, sessionId: string, name: string): string {
  return sessionKey(callerKey(caller), sessionId, name);
}

/** One instance across kn_search rounds: its network, type and whole identity. */
function nodeKey(n: KnNode): string {
  return JSON.stringify([n.kn_id, n.object_type_id, identityKey(n.unique_identities)]);
}
