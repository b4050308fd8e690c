import type { CallContext } from "../../core/call-context";
import { text } from "../../errors/text";
import { ToolError } from "../../errors/tool-error";
import type { JsonClient } from "../../upstream/http-json";
import { segment } from "../../upstream/path-ids";
import type { OperatorDetail } from "../types";
import { operatorSchema } from "./platform-wire";

/** Below the service's base URL and path prefix (platform-paths.ts). */
const BASE = "/operator/market";

/** The operator market (agent-operator-integration): operator definitions. */
export class OperatorMarketClient {
  /** `http` is undefined when OPERATOR_MARKET_URL is not set. */
  constructor(private readonly http: JsonClient | undefined) {}

  async getOperator(ctx: CallContext, operatorId: string): Promise<OperatorDetail> {
    if (this.http === undefined) {
      return Promise.reject(
        new ToolError({
          code: "failed_precondition",
          reason: "OPERATOR_MARKET_NOT_CONFIGURED",
          message: text(
            `operator ${operatorId} cannot be looked up: this service has no operator market configured (OPERATOR_MARKET_URL is not set)`,
            `无法查询算子 ${operatorId}：本服务没有配置算子市场（未设置 OPERATOR_MARKET_URL）`,
          ),
          metadata: { upstream: "operator-market", setting: "OPERATOR_MARKET_URL" },
          hint: {
            message: text(
              "Operator definitions are unavailable in this deployment; retrying will not help until OPERATOR_MARKET_URL is set.",
              "这个部署中无法获取算子定义；在设置 OPERATOR_MARKET_URL 之前，重试没有用。",
            ),
          },
        }),
      );
    }
    return this.http.call(
      ctx,
      {
        method: "GET",
        path: `${BASE}/${segment(operatorId)}`,
        what: text(`operator ${operatorId}`, `算子 ${operatorId}`),
      },
      operatorSchema,
    );
  }
}
