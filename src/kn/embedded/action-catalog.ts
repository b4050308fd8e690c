import { type Json, setAtPath } from "../../core/json";
import { text } from "../../errors/text";
import { type FieldViolation, ToolError } from "../../errors/tool-error";
import { segment } from "../../upstream/path-ids";
import type { ActionQueryResult, InstantiatedAction, McpToolDefinition, ToolBoxTool } from "../actions";
import type { InstanceIdentity } from "../types";
import { type Bundle, BundleError } from "./bundle";
import { compileCondition, evaluateCondition } from "./conditions";
import type { ObjectStore } from "./object-store";
import { ScanBudget } from "./scan-budget";

type BundleActionType = Bundle["action_types"][number];

/** Identities one action query takes at most, and actions it returns at most without any. */
const MAX_ACTIONS = 1000;

/**
 * A network's action types as ontology-query's action query answers them:
 * for each instance the action applies to (the ones asked for, else every one
 * its condition selects), the tool arguments its parameters fix (instance
 * properties, constants) and those left to the caller (inputs).
 */
export class ActionCatalog {
  private readonly types: Map<string, BundleActionType>;
  /** The instances each action type's condition selects, worked out on first use (undefined: no condition). */
  private readonly applying = new Map<string, Promise<Set<number> | undefined>>();

  constructor(
    bundle: Bundle,
    private readonly stores: ReadonlyMap<string, ObjectStore>,
    source: string,
  ) {
    // A bundle whose conditions do not fit its object types is refused at start-up; they run on first use.
    for (const action of bundle.action_types) {
      if (!action.condition) continue;
      const store = stores.get(action.object_type_id)!;
      try {
        compileCondition(
          store,
          action.condition,
          ScanBudget.unlimited(store.type.id),
          `action type ${action.id}: condition`,
        );
      } catch (err) {
        throw new BundleError(`KN bundle ${source}: ${(err as Error).message}`);
      }
    }
    this.types = new Map(bundle.action_types.map((action) => [action.id, action]));
  }

  async query(knId: string, actionTypeId: string, identities: InstanceIdentity[]): Promise<ActionQueryResult> {
    const action = this.types.get(actionTypeId);
    if (!action) {
      throw new ToolError({
        code: "not_found",
        reason: "ACTION_TYPE_NOT_FOUND",
        message: text(
          `action type ${actionTypeId} does not exist in knowledge network ${knId}`,
          `知识网络 ${knId} 中不存在行动类型 ${actionTypeId}`,
        ),
        hint: {
          message: text("Use an action type id of this network.", "使用这个知识网络的行动类型id。"),
          validValues: [...this.types.keys()],
        },
      });
    }
    const store = this.stores.get(action.object_type_id)!;
    const applies = await this.applies(action, store);
    const rows = identities.length > 0 ? this.rowsOf(store, identities) : store.rows.map((_, i) => i);
    const selected = rows.filter((i) => applies === undefined || applies.has(i));
    return {
      action_type: { id: action.id, name: action.name, object_type_id: action.object_type_id, comment: action.comment },
      action_source: action.action_source ?? null,
      actions: selected.slice(0, MAX_ACTIONS).map((i) => instantiate(action, store, i)),
      total_count: selected.length,
      execute_url: `/api/ontology-query/in/v1/knowledge-networks/${segment(knId)}/action-types/${segment(actionTypeId)}/execute`,
    };
  }

  /** The rows the action's condition selects: the bundle's own condition, so no budget but the pauses. */
  private applies(action: BundleActionType, store: ObjectStore): Promise<Set<number> | undefined> {
    let found = this.applying.get(action.id);
    if (!found) {
      const condition = action.condition;
      found = condition
        ? evaluateCondition(
            store,
            condition,
            ScanBudget.unlimited(store.type.id),
            `action type ${action.id}: condition`,
          ).then((m) => new Set(m.rows))
        : Promise.resolve(undefined);
      this.applying.set(action.id, found);
    }
    return found;
  }

  /** The rows of the identities that name an instance, in their order, once each; malformed identities are INVALID_ARGUMENT. */
  private rowsOf(store: ObjectStore, identities: InstanceIdentity[]): number[] {
    const violations: FieldViolation[] = [];
    if (identities.length > MAX_ACTIONS)
      violations.push({
        field: "_instance_identities",
        description: text(`at most ${MAX_ACTIONS} identities`, `最多 ${MAX_ACTIONS} 个实例标识`),
      });
    identities.forEach((identity, i) => {
      const missing = store.type.primary_keys.filter((k) => identity[k] === undefined || identity[k] === null);
      if (missing.length > 0)
        violations.push({
          field: `_instance_identities[${i}]`,
          description: text(
            `missing primary key ${missing.join(", ")} of ${store.type.id}`,
            `缺少 ${store.type.id} 的主键 ${missing.join(", ")}`,
          ),
        });
    });
    if (violations.length > 0) {
      throw new ToolError({
        code: "invalid_argument",
        reason: "INVALID_ACTION_QUERY",
        message: text(
          `invalid action query: ${violations.map((v) => `${v.field}: ${v.description.en}`).join("; ")}`,
          `行动查询无效：${violations.map((v) => `${v.field}：${v.description.zh}`).join("；")}`,
        ),
        violations,
      });
    }
    const rows: number[] = [];
    for (const identity of identities) {
      const i = store.find(identity);
      if (i !== undefined && !rows.includes(i)) rows.push(i);
    }
    return rows;
  }
}

function instantiate(action: BundleActionType, store: ObjectStore, i: number): InstantiatedAction {
  const row = store.rows[i]!;
  const parameters: Record<string, Json> = {};
  const dynamic: Record<string, Json> = {};
  for (const p of action.parameters) {
    if (p.value_from === "input") setAtPath(dynamic, p.name, null);
    else
      setAtPath(parameters, p.name, p.value_from === "property" ? (row[String(p.value)] ?? null) : (p.value ?? null));
  }
  return { parameters, dynamic_params: dynamic, _instance_identity: row._instance_identity, _display: row._display };
}

/**
 * The tool boxes and MCP servers of every bundle, as agent-operator-integration
 * serves them: one registry for the process, since tool boxes belong to no
 * network. A box or server defined by two bundles is a BundleError.
 */
export class ToolRegistry {
  private readonly boxes = new Map<string, Map<string, ToolBoxTool>>();
  private readonly servers = new Map<string, McpToolDefinition[]>();

  add(bundle: Bundle, source: string): void {
    for (const box of bundle.tool_boxes) {
      if (this.boxes.has(box.box_id))
        throw new BundleError(`KN bundle ${source}: tool box ${box.box_id} is already defined by another bundle`);
      this.boxes.set(box.box_id, new Map(box.tools.map((t) => [t.tool_id, t as ToolBoxTool])));
    }
    for (const server of bundle.mcp_servers) {
      if (this.servers.has(server.mcp_id))
        throw new BundleError(`KN bundle ${source}: MCP server ${server.mcp_id} is already defined by another bundle`);
      this.servers.set(server.mcp_id, server.tools);
    }
  }

  toolBoxTool(boxId: string, toolId: string): ToolBoxTool {
    const box = this.boxes.get(boxId);
    if (!box) {
      throw new ToolError({
        code: "not_found",
        reason: "TOOL_BOX_NOT_FOUND",
        message: text(`tool box ${boxId} does not exist`, `工具箱 ${boxId} 不存在`),
        hint: {
          message: text("Use the id of a registered tool box.", "使用已注册工具箱的id。"),
          validValues: [...this.boxes.keys()],
        },
      });
    }
    const tool = box.get(toolId);
    if (!tool) {
      throw new ToolError({
        code: "not_found",
        reason: "TOOL_NOT_FOUND",
        message: text(`tool ${toolId} does not exist in tool box ${boxId}`, `工具箱 ${boxId} 中不存在工具 ${toolId}`),
        hint: {
          message: text("Use the id of one of the box's tools.", "使用这个工具箱中某个工具的id。"),
          validValues: [...box.keys()],
        },
      });
    }
    return structuredClone(tool);
  }

  mcpTools(mcpId: string): McpToolDefinition[] {
    const tools = this.servers.get(mcpId);
    if (!tools) {
      throw new ToolError({
        code: "not_found",
        reason: "MCP_SERVER_NOT_FOUND",
        message: text(`MCP server ${mcpId} is not registered`, `MCP 服务 ${mcpId} 未注册`),
        hint: {
          message: text("Use the id of a registered MCP server.", "使用已注册 MCP 服务的id。"),
          validValues: [...this.servers.keys()],
        },
      });
    }
    return structuredClone(tools);
  }
}
