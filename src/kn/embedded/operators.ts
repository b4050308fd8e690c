import { z } from "zod";
import { MAX_MS, MIN_MS } from "../../core/calendar";
import type { Json } from "../../core/json";
import { text, zodText } from "../../errors/text";
import { ToolError } from "../../errors/tool-error";
import { safeParseBoth, violationsOf } from "../../errors/validation";
import type { InstanceIdentity, OperatorDetail, Row } from "../types";
import { TIMESTAMP_RANGE } from "./metric-values";

/** An operator call as the platform makes it: parameters placed by their `source`. */
export interface OperatorCall {
  header: Record<string, Json>;
  query: Record<string, Json>;
  path: Record<string, Json>;
  body: Record<string, Json>;
}

/** What an operator may read of the embedded network. */
export interface OperatorEnv {
  /** The instances related to `identity` (of `objectTypeId`) by `relationTypeId`, walking it forward or backward. */
  related(
    relationTypeId: string,
    direction: "forward" | "backward",
    objectTypeId: string,
    identity: InstanceIdentity,
  ): Row[];
  /** An instance's series for a metric logic property: [[ts_ms, value], ...]. */
  series(
    objectTypeId: string,
    property: string,
    identity: InstanceIdentity,
  ): readonly (readonly [number, number | null])[];
}

export interface RegisteredOperator {
  detail: OperatorDetail;
  /** The operator's response body. Throws ToolError for bad parameters. */
  run(call: OperatorCall, env: OperatorEnv): Json;
}

const DAY_MS = 86_400_000;

const healthInput = z.object({
  query: z.object({ model_version: z.literal("v2", { error: zodText('must be "v2"', '必须是 "v2"') }) }).passthrough(),
  body: z
    .object({
      company_id: z.string().min(1),
      company_name: z.string().default(""),
      weights: z
        .object({
          growth: z.number().min(0).default(0),
          breadth: z.number().min(0).default(0),
          stability: z.number().min(0).default(0),
        })
        .strict()
        .refine((w) => w.growth + w.breadth + w.stability > 0, zodText("must not all be 0", "不能全为 0")),
      focus_categories: z.array(z.string().min(1)).max(20),
      as_of: z.number().int().min(MIN_MS, TIMESTAMP_RANGE).max(MAX_MS, TIMESTAMP_RANGE),
    })
    .passthrough(),
});

/**
 * business_health_score: a company's health from its own data in the network.
 * growth compares approvals in the 12 months before `as_of` with the 12 before
 * those; breadth is the number of dosage forms it makes (6 or more is full
 * marks); stability is the share of the last 24 months with an approval. The
 * score is their weighted mean (0..1), graded A (≥ 0.8) to E.
 */
const businessHealthScore: RegisteredOperator = {
  detail: {
    operator_id: "op_business_health_score",
    name: "企业健康度评分",
    metadata: {
      description: "根据企业药品上市情况、产品结构与给定权重计算健康度评分（0-1）和等级（A-E）",
      api_spec: {
        parameters: [
          {
            name: "model_version",
            in: "query",
            required: true,
            schema: { type: "string", enum: ["v2"] },
            description: "评分模型版本",
          },
        ],
        request_body: {
          content: {
            "application/json": {
              schema: {
                type: "object",
                required: ["company_id", "weights", "focus_categories", "as_of"],
                properties: {
                  company_id: { type: "string", description: "企业ID" },
                  company_name: { type: "string", description: "企业名称" },
                  weights: {
                    type: "object",
                    description: "各维度权重（非负，至少一个大于0）",
                    properties: {
                      growth: { type: "number" },
                      breadth: { type: "number" },
                      stability: { type: "number" },
                    },
                    additionalProperties: false,
                  },
                  focus_categories: {
                    type: "array",
                    items: { type: "string" },
                    description: "重点关注的药品剂型，如 片剂、注射剂",
                  },
                  as_of: { type: "integer", description: "评估时点（毫秒时间戳）" },
                },
              },
            },
          },
        },
      },
    },
    operator_info: { execution_mode: "sync" },
  },
  run(call, env) {
    const parsed = safeParseBoth(healthInput, call);
    if (!parsed.success) {
      const violations = violationsOf(parsed.error);
      throw new ToolError({
        code: "invalid_argument",
        reason: "INVALID_OPERATOR_PARAMS",
        message: text(
          `business_health_score: ${violations.map((v) => `${v.field}: ${v.description.en}`).join("; ")}`,
          `business_health_score：${violations.map((v) => `${v.field}：${v.description.zh}`).join("；")}`,
        ),
        violations,
      });
    }
    const { company_id, company_name, weights, focus_categories, as_of } = parsed.data.body;
    const identity = { company_id };
    const series = env.series("company", "approved_drug_count", identity);
    const approvals = (from: number, to: number) =>
      series.reduce((s, [t, v]) => (t >= from && t < to && v !== null ? s + v : s), 0);
    const recent = approvals(as_of - 365 * DAY_MS, as_of);
    const prior = approvals(as_of - 730 * DAY_MS, as_of - 365 * DAY_MS);
    const growth = clamp(0.5 + (recent - prior) / (2 * Math.max(1, prior)));
    const products = env.related("produces", "forward", "company", identity);
    const forms = new Set(products.map((p) => String(p["dosage_form"] ?? "")).filter((f) => f !== ""));
    const breadth = clamp(forms.size / 6);
    let activeMonths = 0;
    for (let m = 0; m < 24; m++)
      if (approvals(as_of - (m + 1) * 30 * DAY_MS, as_of - m * 30 * DAY_MS) > 0) activeMonths++;
    const stability = activeMonths / 24;
    const total = weights.growth + weights.breadth + weights.stability;
    const score = (weights.growth * growth + weights.breadth * breadth + weights.stability * stability) / total;
    const focused = products.filter((p) =>
      focus_categories.some((c) => String(p["dosage_form"] ?? "").includes(c)),
    ).length;
    return {
      company_id,
      company_name,
      score: round(score),
      level: score >= 0.8 ? "A" : score >= 0.6 ? "B" : score >= 0.4 ? "C" : score >= 0.2 ? "D" : "E",
      dimensions: { growth: round(growth), breadth: round(breadth), stability: round(stability) },
      weights,
      approvals_last_12_months: recent,
      approvals_prior_12_months: prior,
      products: products.length,
      focus_share: products.length === 0 ? 0 : round(focused / products.length),
      model_version: "v2",
      as_of,
    };
  },
};

/** The operators the embedded engine can run, by operator id. */
export function builtInOperators(): Map<string, RegisteredOperator> {
  return new Map([[businessHealthScore.detail.operator_id, businessHealthScore]]);
}

function clamp(x: number): number {
  return Math.min(1, Math.max(0, x));
}

function round(x: number): number {
  return Math.round(x * 100) / 100;
}
