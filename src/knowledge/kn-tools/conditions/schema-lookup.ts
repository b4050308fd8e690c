import type { CallContext } from "../../../core/call-context";
import { ToolError } from "../../../errors/tool-error";
import type { KnowledgeNetworkBackend } from "../../../kn/backend";
import type { KnowledgeNetwork, ObjectType } from "../../../kn/types";
import { platformFailure } from "./platform-failure";
import { closestNames } from "./suggest";

/** The RPC an agent calls to learn a network's types (its MCP name is search_schema). */
export const SEARCH_SCHEMA_RPC = "contextloader.kntools.v1.KnowledgeToolsService/SearchSchema";

/**
 * The definition of one object type, which conditions, projections and sorts
 * are checked against. An unknown type is NOT_FOUND naming the network's
 * types (and the closest one), the same on every backend; an unknown network
 * is NOT_FOUND too.
 */
export async function objectTypeOf(
  backend: KnowledgeNetworkBackend,
  ctx: CallContext,
  knId: string,
  objectTypeId: string,
): Promise<ObjectType> {
  try {
    const [type] = await backend.getObjectTypes(ctx, knId, [objectTypeId]);
    return type!;
  } catch (err) {
    if (!(err instanceof ToolError) || err.code !== "not_found") throw platformFailure(err, "the object type lookup");
    // The backend may already know the network is missing (with the networks there are).
    if (err.reason === "KNOWLEDGE_NETWORK_NOT_FOUND") throw unknownNetwork(knId, err);
    // Which was missing, the network or the type, and what there is instead.
    const network = await networkOf(backend, ctx, knId);
    throw unknownObjectType(network, objectTypeId, "ot_id");
  }
}

/** A network with its object and relation types; NOT_FOUND when it does not exist. */
export async function networkOf(
  backend: KnowledgeNetworkBackend,
  ctx: CallContext,
  knId: string,
): Promise<KnowledgeNetwork> {
  try {
    return await backend.getKnowledgeNetwork(ctx, knId);
  } catch (err) {
    if (!(err instanceof ToolError) || err.code !== "not_found")
      throw platformFailure(err, "the knowledge network lookup");
    throw unknownNetwork(knId, err);
  }
}

/** NOT_FOUND for a network that does not exist, with the networks the backend listed. */
function unknownNetwork(knId: string, err: ToolError): ToolError {
  return new ToolError({
    code: "not_found",
    reason: "KNOWLEDGE_NETWORK_NOT_FOUND",
    message: `knowledge network ${knId} does not exist`,
    violations: [{ field: "kn_id", description: `no knowledge network ${knId}` }],
    hint: {
      message: "Pass the id of an existing knowledge network as kn_id (or in the x-kn-id header).",
      ...(err.hint?.validValues?.length ? { validValues: err.hint.validValues } : {}),
    },
  });
}

/** NOT_FOUND for an object type the network does not have, at `field`. */
function unknownObjectType(network: KnowledgeNetwork, objectTypeId: string, field: string): ToolError {
  const ids = network.object_types.map((t) => t.id);
  const close = closestNames(objectTypeId, ids, 3);
  return new ToolError({
    code: "not_found",
    reason: "OBJECT_TYPE_NOT_FOUND",
    message: `object type ${objectTypeId} does not exist in knowledge network ${network.id}${close.length ? `; did you mean ${close.join(" or ")}?` : ""}`,
    violations: [{ field, description: `no object type ${objectTypeId} in ${network.id}` }],
    hint: {
      message: `Use an object type id of ${network.id}; SearchSchema finds the ones a question needs.`,
      nextRpc: SEARCH_SCHEMA_RPC,
      validValues: ids,
    },
  });
}
