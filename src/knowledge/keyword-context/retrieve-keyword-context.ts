import type { CallContext } from "../../core/call-context";
import type { Json } from "../../core/json";
import { comparable } from "../../core/text";
import { displayOf, identityKey, instanceIdOf } from "../../kn/identity";
import type { InstanceIdentity, Row } from "../../kn/types";
import type { SessionStore } from "../../store/session-store";
import type { KeywordContextDeps } from "../deps";
import { type RecalledObjectType, type SessionSchema, unionOf } from "../session";
import { compactContext } from "./compact";
import {
  keywordRequired,
  keywordWithoutText,
  networksNotInSession,
  objectTypeAmbiguous,
  objectTypeNotInSchema,
  objectTypeRequired,
  schemaNotInSession,
  sessionIdRequired,
} from "./errors";
import type { KeywordContextInput } from "./input";
import { findInstances } from "./instances";
import { type FoundNeighbor, findNeighbors } from "./neighbors";
import type { InstanceContext, KeywordContextResult, KeywordContextWarning, NeighborContext } from "./result";

/**
 * Step two of the two-step retrieval (spec keyword-context-recall §4–§5): the
 * instances of one object type behind a keyword, and their one-hop neighbours
 * over the relation types recalled into the session, in two upstream round
 * trips, deduplicated against what the session already returned.
 */
export async function retrieveKeywordContext(
  deps: KeywordContextDeps,
  ctx: CallContext,
  input: KeywordContextInput,
): Promise<KeywordContextResult> {
  // 1. The request, checked in the spec's order.
  if (input.session_id === "") throw sessionIdRequired();
  if (input.query === "") throw keywordRequired();
  if (comparable(input.query) === "") throw keywordWithoutText();
  // 2. The session's schema and the object type the keyword belongs to.
  const store = deps.sessions.pick(input.session_type);
  const schema = await sessionSchema(deps, ctx, store, input);
  const ot = objectTypeOf(schema, input);
  const warnings: KeywordContextWarning[] = [];
  // 3. Round trip 1 (and 2 when it found nothing convincing): the instances the keyword names, scored here.
  const { chosen, total } = await findInstances(deps, ctx, ot, input.query, warnings);
  // 4. The next round trip: every neighbour path, batched.
  const relations = schema.relation_types.filter(
    (r) => r.kn_id === ot.kn_id && (r.source_object_type_id === ot.id || r.target_object_type_id === ot.id),
  );
  const rows = chosen.map((c) => c.row);
  const neighbors = rows.length === 0 ? [] : await findNeighbors(deps, ctx, ot, rows, relations, warnings);
  // 5. What this session has not returned yet comes with its properties (atomic per instance).
  const keyOf = (otId: string, identity: InstanceIdentity) => `${ot.kn_id}/${otId}/${identityKey(identity)}`;
  const rowKeys = rows.map((r) => keyOf(ot.id, r._instance_identity));
  const neighborKeys = neighbors.map((list) =>
    list.map((n) => keyOf(n.object.object_type_id, n.object._instance_identity)),
  );
  const keys = [...rowKeys, ...neighborKeys.flat()];
  const fresh =
    keys.length === 0
      ? new Set<string>()
      : await deps.sessions.claimReturned(store, ctx.caller, input.session_id, keys);

  const instances = chosen.map((c, i): InstanceContext => {
    const id = instanceIdOf(c.row._instance_identity, ot.primary_keys);
    const full = fresh.has(rowKeys[i]!);
    return {
      instance_id: id,
      object_type_id: ot.id,
      instance_name: displayOf(c.row._display, id),
      identity: c.row._instance_identity,
      properties: full ? propertiesOf(c.row) : undefined,
      match_type: c.match_type,
      score: c.score,
      matched_fields: c.matched_fields,
      already_returned: !full,
      neighbors: (neighbors[i] ?? []).map((n, j) => neighborContext(n, fresh.has(neighborKeys[i]![j]!))),
    };
  });
  const result: KeywordContextResult = {
    session_id: input.session_id,
    keyword: input.query,
    object_type_id: ot.id,
    matched_field: chosen[0]?.matched_fields[0] ?? "",
    instances,
    statistics: {
      total_instances: total,
      total_neighbors: instances.reduce((n, i) => n + i.neighbors.length, 0),
      matched_fields: [...new Set(chosen.flatMap((c) => c.matched_fields))],
    },
    warnings,
    compact: undefined,
  };
  if (input.compact_format) result.compact = compactContext(result);
  ctx.log.info(
    {
      session_id: input.session_id,
      object_type_id: ot.id,
      instances: instances.length,
      match: chosen[0]?.match_type ?? "none",
      neighbors: result.statistics.total_neighbors,
      warnings: warnings.length,
    },
    "keyword context recalled",
  );
  return result;
}

/** The union of the session's schema rounds; none is SCHEMA_NOT_IN_SESSION, a missing object_type_id is asked for. */
async function sessionSchema(
  deps: KeywordContextDeps,
  ctx: CallContext,
  store: SessionStore,
  input: KeywordContextInput,
): Promise<SessionSchema> {
  const rounds = await deps.sessions.rounds(store, ctx.caller, input.session_id);
  if (rounds.length === 0) throw schemaNotInSession(input.session_id);
  const schema = unionOf(rounds);
  if (input.object_type_id === "") throw objectTypeRequired([...new Set(schema.object_types.map((o) => o.id))]);
  return schema;
}

/** The one object type of the session named by object_type_id (and kn_ids, when the id is in several networks). */
function objectTypeOf(schema: SessionSchema, input: KeywordContextInput): RecalledObjectType {
  const wanted = new Set(input.kn_ids.map((k) => k.knowledge_network_id));
  const foreign = [...wanted].filter((k) => !schema.kn_ids.includes(k));
  if (foreign.length > 0) throw networksNotInSession(foreign, schema.kn_ids);
  const matches = schema.object_types.filter(
    (o) => o.id === input.object_type_id && (wanted.size === 0 || wanted.has(o.kn_id)),
  );
  if (matches.length === 0)
    throw objectTypeNotInSchema(input.object_type_id, [...new Set(schema.object_types.map((o) => o.id))]);
  if (matches.length > 1)
    throw objectTypeAmbiguous(
      input.object_type_id,
      matches.map((m) => m.kn_id),
    );
  return matches[0]!;
}

function neighborContext(n: FoundNeighbor, fresh: boolean): NeighborContext {
  return {
    instance_id: n.id,
    object_type_id: n.object.object_type_id,
    instance_name: displayOf(n.object._display, n.id),
    relation_type_id: n.relation.id,
    relation_type_name: n.relation.name,
    relation_direction: n.direction,
    properties: fresh ? n.object.properties : undefined,
    already_returned: !fresh,
  };
}

/** A row's properties without the system fields. */
function propertiesOf(row: Row): Record<string, Json> {
  const out: Record<string, Json> = {};
  for (const [k, v] of Object.entries(row)) if (!k.startsWith("_")) out[k] = v;
  return out;
}
