import type { CallContext } from "../../core/call-context";
import { text } from "../../errors/text";
import { type Hint, ToolError } from "../../errors/tool-error";
import type { OntologyManagerClient } from "./ontology-manager";

/** How long a network's type ids are reused, as the row shapes are (http-backend.ts). */
const TTL_MS = 60_000;
/** Accounts × networks remembered at most; the oldest go first. */
const MAX_ENTRIES = 256;
/**
 * Ids one error lists in valid_values at most: enough for any network an
 * agent can read whole (the sample has 17 object types); past that the
 * hint says how many there are and that SearchSchema finds the right one.
 */
export const MAX_VALID_VALUES = 100;

interface TypeIds {
  objectTypes: string[];
  actionTypes: string[];
}

/**
 * The platform answers 404 for an unknown object type, action type or
 * network alike, with nothing an agent can pick from. This turns such a 404
 * into the embedded engine's answer: OBJECT_TYPE_NOT_FOUND or
 * ACTION_TYPE_NOT_FOUND listing the network's ids (from its export), or
 * KNOWLEDGE_NETWORK_NOT_FOUND listing the networks when the network itself
 * is missing. The ids are cached per account (the platform decides which
 * networks an account sees), only ever read on these error paths.
 */
export class NetworkIds {
  private readonly typeIds = new Map<string, { ids: Promise<TypeIds>; expiresAt: number }>();

  constructor(private readonly manager: OntologyManagerClient) {}

  /** What to throw for `requested` object types the platform did not find (`cause`: its answer). */
  async unknownObjectTypes(ctx: CallContext, knId: string, requested: string[], cause: ToolError): Promise<ToolError> {
    const known = await this.typeIdsOr(ctx, knId, cause);
    if (known instanceof ToolError) return known;
    const missing = requested.filter((id) => !known.objectTypes.includes(id));
    // The export has them all: the 404 was about something else, and the platform's word stands.
    if (missing.length === 0) return cause;
    return new ToolError({
      code: "not_found",
      reason: "OBJECT_TYPE_NOT_FOUND",
      message: text(
        `object type ${missing.join(", ")} does not exist in knowledge network ${knId}`,
        `知识网络 ${knId} 中不存在对象类型 ${missing.join(", ")}`,
      ),
      metadata: cause.metadata,
      hint: listing("object", known.objectTypes),
      cause,
    });
  }

  /** What to throw for an action type the platform did not find (`cause`: its answer). */
  async unknownActionType(ctx: CallContext, knId: string, actionTypeId: string, cause: ToolError): Promise<ToolError> {
    const known = await this.typeIdsOr(ctx, knId, cause);
    if (known instanceof ToolError) return known;
    if (known.actionTypes.includes(actionTypeId)) return cause;
    return new ToolError({
      code: "not_found",
      reason: "ACTION_TYPE_NOT_FOUND",
      message: text(
        `action type ${actionTypeId} does not exist in knowledge network ${knId}`,
        `知识网络 ${knId} 中不存在行动类型 ${actionTypeId}`,
      ),
      metadata: cause.metadata,
      hint: listing("action", known.actionTypes),
      cause,
    });
  }

  /**
   * The network's type ids; or the error to throw instead: the network's
   * own NOT_FOUND when it does not exist, `cause` when the export cannot be
   * read (the platform's 404 is then all there is to say).
   */
  private async typeIdsOr(ctx: CallContext, knId: string, cause: ToolError): Promise<TypeIds | ToolError> {
    try {
      return await this.typeIdsOf(ctx, knId);
    } catch (err) {
      if (!(err instanceof ToolError)) throw err;
      if (err.code === "not_found") return this.unknownNetwork(ctx, knId, err);
      ctx.log.warn(
        { kn_id: knId, reason: err.reason },
        "the network's export could not be read to list valid ids; the platform's 404 goes as it is",
      );
      return cause;
    }
  }

  private typeIdsOf(ctx: CallContext, knId: string): Promise<TypeIds> {
    const key = `${accountOf(ctx)}\u0000${knId}`;
    const now = Date.now();
    const cached = this.typeIds.get(key);
    if (cached && cached.expiresAt > now) return cached.ids;
    const ids = this.manager.getKnowledgeNetwork(ctx, knId).then((kn) => ({
      objectTypes: kn.object_types.map((t) => t.id),
      actionTypes: kn.action_types.map((a) => a.id),
    }));
    this.typeIds.delete(key);
    this.typeIds.set(key, { ids, expiresAt: now + TTL_MS });
    if (this.typeIds.size > MAX_ENTRIES) this.typeIds.delete(this.typeIds.keys().next().value!);
    // A failed read is not remembered: the next error asks again.
    ids.catch(() => {
      if (this.typeIds.get(key)?.ids === ids) this.typeIds.delete(key);
    });
    return ids;
  }

  /**
   * KNOWLEDGE_NETWORK_NOT_FOUND listing the networks the account sees; when
   * the list is missing too, the path prefix is wrong (a 0.7 layout against a
   * 0.8 platform, or the reverse), which no caller can fix.
   */
  private async unknownNetwork(ctx: CallContext, knId: string, cause: ToolError): Promise<ToolError> {
    let networks: { ids: string[]; total: number } | undefined;
    try {
      const list = await this.manager.listKnowledgeNetworks(ctx, { limit: MAX_VALID_VALUES });
      const ids = list.entries.slice(0, MAX_VALID_VALUES).map((k) => k.id);
      networks = { ids, total: Math.max(list.total_count, list.entries.length) };
    } catch (err) {
      if (!(err instanceof ToolError)) throw err;
      if (err.code === "not_found") return layoutMismatch(cause);
      ctx.log.warn({ kn_id: knId, reason: err.reason }, "the networks could not be listed to name the valid ones");
    }
    return new ToolError({
      code: "not_found",
      reason: "KNOWLEDGE_NETWORK_NOT_FOUND",
      message: text(`knowledge network ${knId} does not exist`, `知识网络 ${knId} 不存在`),
      metadata: cause.metadata,
      hint: {
        message:
          networks === undefined || networks.total <= networks.ids.length
            ? text("Use one of the knowledge network ids this service has.", "使用本服务已有的知识网络id之一。")
            : text(
                `Use one of the knowledge network ids this service has (valid_values lists ${networks.ids.length} of ${networks.total}).`,
                `使用本服务已有的知识网络id之一（valid_values 列出了 ${networks.total} 个中的 ${networks.ids.length} 个）。`,
              ),
        ...(networks?.ids.length ? { validValues: networks.ids } : {}),
      },
      cause,
    });
  }
}

/** A hint to use an object or action type id of the network, naming at most MAX_VALID_VALUES ids, saying so when there are more. */
function listing(kind: "object" | "action", ids: string[]): Hint {
  const what = kind === "object" ? text("object", "对象") : text("action", "行动");
  if (ids.length <= MAX_VALID_VALUES) {
    return {
      message: text(`Use an ${what.en} type id of this network.`, `使用这个知识网络的${what.zh}类型id。`),
      validValues: ids,
    };
  }
  return {
    message: text(
      `Use an ${what.en} type id of this network; valid_values lists ${MAX_VALID_VALUES} of its ${ids.length} ${what.en} types, SearchSchema finds the ones a question needs.`,
      `使用这个知识网络的${what.zh}类型id；valid_values 列出了它 ${ids.length} 个${what.zh}类型中的 ${MAX_VALID_VALUES} 个，SearchSchema 能找到一个问题需要的那些。`,
    ),
    validValues: ids.slice(0, MAX_VALID_VALUES),
  };
}

function layoutMismatch(cause: ToolError): ToolError {
  return new ToolError({
    code: "failed_precondition",
    reason: "PLATFORM_PATH_NOT_FOUND",
    message: text(
      "ontology-manager answers 404 even for its list of knowledge networks: this service's paths do not match the platform's release (PLATFORM_API_LAYOUT 0.7 calls /api/ontology-manager/in/v1, 0.8 /api/bkn-backend/in/v1; ONTOLOGY_MANAGER_PATH_PREFIX overrides both)",
      "ontology-manager 连知识网络列表都返回 404：本服务的路径与平台的版本不匹配（PLATFORM_API_LAYOUT 0.7 调用 /api/ontology-manager/in/v1，0.8 调用 /api/bkn-backend/in/v1；ONTOLOGY_MANAGER_PATH_PREFIX 会覆盖两者）",
    ),
    metadata: cause.metadata,
    hint: {
      message: text(
        "The operators must set PLATFORM_API_LAYOUT to the platform's release; retrying will not help.",
        "需要运维人员把 PLATFORM_API_LAYOUT 设为平台的版本；重试没有用。",
      ),
    },
    cause,
  });
}

function accountOf(ctx: CallContext): string {
  return `${ctx.caller.accountType}\u0000${ctx.caller.accountId}`;
}
