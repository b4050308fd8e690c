import { sessionKey, type SessionStore } from "../../store/session-store";
import type { Caller } from "../../core/call-context";
import type { KnNode } from "./wire";

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

/**
 * Records this round's nodes in the session and returns what the round
 * answers: with return_union, every node of the session (this round's first,
 * then earlier rounds', latest first); without, only the nodes no earlier
 * round found. The append numbers the round, so of concurrent rounds each
 * compares itself with exactly the rounds recorded before it.
 */
export async function returnNodes(store: SessionStore, caller: Caller, sessionId: string, query: string, current: KnNode[], returnUnion: boolean): Promise<ReturnedNodes> {
  const key = sessionKey(`${caller.accountType}:${caller.accountId}`, sessionId, "kn_search_nodes");
  const count = await store.append(key, { query, nodes: current } satisfies NodeRound);
  const earlier = (await store.list<NodeRound>(key)).slice(0, count - 1);
  const seen = new Set(earlier.flatMap((r) => r.nodes.map(nodeKey)));
  if (!returnUnion) {
    const fresh = current.filter((n) => !seen.has(nodeKey(n)));
    return { nodes: fresh, seenBefore: current.length - fresh.length };
  }
  const union = new Map(current.map((n) => [nodeKey(n), n]));
  for (const round of [...earlier].reverse()) for (const n of round.nodes) if (!union.has(nodeKey(n))) union.set(nodeKey(n), n);
  return { nodes: [...union.values()], seenBefore: 0 };
}

/** One instance across rounds: its network, type and whole identity (keys sorted). */
function nodeKey(n: KnNode): string {
  const identity = Object.keys(n.unique_identities)
    .sort()
    .map((k) => [k, n.unique_identities[k]]);
  return JSON.stringify([n.kn_id, n.object_type_id, identity]);
}
