import type { CallContext } from "../../core/call-context";
import { type Text, text } from "../../errors/text";
import { ToolError } from "../../errors/tool-error";
import type { JsonClient } from "../../upstream/http-json";
import { segment } from "../../upstream/path-ids";
import type { McpToolDefinition, ToolBoxTool } from "../actions";
import { mcpToolListSchema, toolBoxToolSchema } from "./agent-tools-wire";

/** agent-operator-integration's tool boxes and MCP servers: the tools action types are bound to. */
export class OperatorIntegrationClient {
  /** `http` is undefined when OPERATOR_MARKET_URL (this service's base URL) is not set. */
  constructor(private readonly http: JsonClient | undefined) {}

  async getToolBoxTool(ctx: CallContext, boxId: string, toolId: string): Promise<ToolBoxTool> {
    const what = text(`tool ${toolId} of tool box ${boxId}`, `工具箱 ${boxId} 的工具 ${toolId}`);
    return this.client(what).call(
      ctx,
      { method: "GET", path: `/tool-box/${segment(boxId)}/tool/${segment(toolId)}`, what },
      toolBoxToolSchema,
    );
  }

  async listMcpTools(ctx: CallContext, mcpId: string): Promise<McpToolDefinition[]> {
    const what = text(`the tools of MCP server ${mcpId}`, `MCP 服务器 ${mcpId} 的工具`);
    return this.client(what).call(
      ctx,
      { method: "GET", path: `/mcp/proxy/${segment(mcpId)}/tools`, what },
      mcpToolListSchema,
    );
  }

  private client(what: Text): JsonClient {
    if (this.http !== undefined) return this.http;
    throw new ToolError({
      code: "failed_precondition",
      reason: "OPERATOR_MARKET_NOT_CONFIGURED",
      message: text(
        `${what.en} cannot be looked up: this service has no agent-operator-integration configured (OPERATOR_MARKET_URL is not set)`,
        `无法查询${what.zh}：本服务没有配置 agent-operator-integration（未设置 OPERATOR_MARKET_URL）`,
      ),
      metadata: { upstream: "agent-operator-integration", setting: "OPERATOR_MARKET_URL" },
      hint: {
        message: text(
          "Tool definitions are unavailable in this deployment; retrying will not help until OPERATOR_MARKET_URL is set.",
          "这个部署中无法获取工具定义；在设置 OPERATOR_MARKET_URL 之前，重试没有用。",
        ),
      },
    });
  }
}
