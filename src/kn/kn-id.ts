import type { CallContext } from "../core/call-context";
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
    message: "kn_id is required: pass kn_id, or send the x-kn-id header",
    violations: [{ field: "kn_id", description: "kn_id is required (or the x-kn-id header)" }],
    hint: { message: 'Pass kn_id (e.g. "kn_medical") or configure the x-kn-id header of this connection.' },
  });
}
