import type { CallContext } from "../core/call-context";
import { text } from "../errors/text";
import { ToolError } from "../errors/tool-error";
import { checkPathId } from "../upstream/path-ids";

/**
 * The knowledge network a kn-tools call works on: its `kn_id` argument, else
 * the `x-kn-id` header (MCP_KN_ID over stdio). One rule for every tool;
 * neither given is INVALID_ARGUMENT naming both ways, and an id that could
 * leave its URL path segment is INVALID_ARGUMENT naming where it came from.
 */
export function knIdOf(argument: string, ctx: CallContext): string {
  const given = argument.trim();
  if (given !== "") return checkPathId(given, "kn_id");
  const fromHeader = ctx.headerKnId ?? "";
  if (fromHeader !== "") return checkPathId(fromHeader, "x-kn-id");
  throw new ToolError({
    code: "invalid_argument",
    reason: "KN_ID_REQUIRED",
    message: text(
      "kn_id is required: pass kn_id, or send the x-kn-id header",
      "必须提供kn_id：传入kn_id，或发送x-kn-id请求头",
    ),
    violations: [
      { field: "kn_id", description: text("required (or the x-kn-id header)", "必填（或用x-kn-id请求头）") },
    ],
    hint: {
      message: text(
        'Pass kn_id (e.g. "kn_medical") or configure the x-kn-id header of this connection.',
        '传入kn_id（例如"kn_medical"），或为这个连接配置x-kn-id请求头。',
      ),
    },
  });
}
