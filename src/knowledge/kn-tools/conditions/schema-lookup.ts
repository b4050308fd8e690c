import type { CallContext } from "../../../core/call-context";
import { text } from "../../../errors/text";
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
    if (!(err instanceof ToolError) || err.code !== "not_found")
      throw platformFailure(err, text("the object type lookup", "对象类型查询"));
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
      throw platformFailure(err, text("the knowledge network lookup", "知识网络查询"));
    throw unknownNetwork(knId, err);
  }
}

/** NOT_FOUND for a network that does not exist, with the networks the backend listed. */
function unknownNetwork(knId: string, err: ToolError): ToolError {
  return new ToolError({
    code: "not_found",
    reason: "KNOWLEDGE_NETWORK_NOT_FOUND",
    message: text(`knowledge network ${knId} does not exist`, `知识网络 ${knId} 不存在`),
    violations: [{ field: "kn_id", description: text(`no knowledge network ${knId}`, `没有知识网络 ${knId}`) }],
    hint: {
      message: text(
        "Pass the id of an existing knowledge network as kn_id (or in the x-kn-id header).",
        "用 kn_id（或 x-kn-id 请求头）传入一个存在的知识网络的id。",
      ),
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
    message: text(
      `object type ${objectTypeId} does not exist in knowledge network ${network.id}${close.length ? `; did you mean ${close.join(" or ")}?` : ""}`,
      `知识网络 ${network.id} 中不存在对象类型 ${objectTypeId}${close.length ? `；是否指 ${close.join(" 或 ")}？` : ""}`,
    ),
    violations: [
      {
        field,
        description: text(
          `no object type ${objectTypeId} in ${network.id}`,
          `${network.id} 中没有对象类型 ${objectTypeId}`,
        ),
      },
    ],
    hint: {
      message: text(
        `Use an object type id of ${network.id}; SearchSchema finds the ones a question needs.`,
        `使用 ${network.id} 的对象类型id；SearchSchema 能找到一个问题需要的那些。`,
      ),
      nextRpc: SEARCH_SCHEMA_RPC,
      validValues: ids,
    },
  });
}
