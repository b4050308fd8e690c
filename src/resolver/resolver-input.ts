import { z } from "zod";
import { isValidTimeZone, MAX_MS, MIN_MS } from "../core/calendar";
import { zodText } from "../errors/text";
import { nullAsAbsent } from "../errors/validation";
import { pathId } from "../upstream/path-ids";

export const MAX_IDENTITIES = 1000;
export const MAX_PROPERTIES = 20;

const identity = z.record(
  z.string(),
  z.union(
    [
      z.string().trim().min(1, zodText("a primary key value must not be empty", "主键值不能为空")),
      z.number(),
      z.boolean(),
    ],
    {
      error: zodText("a primary key value is a string, number or boolean", "主键值须是字符串、数字或布尔值"),
    },
  ),
);

const identities = z
  .array(identity)
  .max(MAX_IDENTITIES, zodText(`at most ${MAX_IDENTITIES} identities`, `至多 ${MAX_IDENTITIES} 个实例`))
  .default([]);

/**
 * The resolver's fields (spec logic-property-resolver §5.2 and the existing
 * implementation's OpenAPI) with their defaults, identities under the spec's
 * name; the other name is added by withIdentities below.
 */
const fields = z.object({
  kn_id: z.string().trim().default("").describe("业务知识网络 ID，如 kn_medical；不填则用 x-kn-id 请求头"),
  ot_id: pathId(z.string().trim().min(1, zodText("required, e.g. company", "必填，例如 company"))).describe(
    "对象类型 ID（逻辑属性所属的类型），如 company",
  ),
  query: z
    .string()
    .trim()
    .min(
      1,
      zodText(
        "required: the user's question, with its time and scope words",
        "必填：用户的问题，保留其中的时间和范围词",
      ),
    )
    .max(4000, zodText("must be at most 4000 characters", "至多 4000 个字符"))
    .describe("用户的原问题，保留其中的时间、范围、口径词（如“近三个月每月”）"),
  unique_identities: identities.describe(
    '要计算的实例，每个一个完整的主键映射，如 [{"company_id": "company_000001"}]；须取自检索结果（_instance_identity），不可臆造',
  ),
  properties: z
    .array(z.string().trim().min(1, zodText("a property name must not be empty", "属性名不能为空")))
    .min(
      1,
      zodText(
        'required: the logic properties to resolve, e.g. ["approved_drug_count"]',
        '必填：要计算的逻辑属性，例如 ["approved_drug_count"]',
      ),
    )
    .max(MAX_PROPERTIES, zodText(`at most ${MAX_PROPERTIES} properties`, `至多 ${MAX_PROPERTIES} 个属性`))
    .describe('要计算的逻辑属性名（对象类型的 logic_properties），如 ["approved_drug_count"]'),
  additional_context: z
    .string()
    .max(20_000, zodText("must be at most 20000 characters", "至多 20000 个字符"))
    .default("")
    .describe("参数需要的补充信息：实例事实、约束、时间（start/end、instant、step），可为自由文本或 JSON 字符串"),
  now_ms: z
    .union([z.number().int(), z.string().regex(/^\d+$/).transform(Number)])
    .refine(
      (n) => n >= MIN_MS && n < MAX_MS,
      zodText("must be a millisecond timestamp between 2000 and 2100", "必须是 2000 年到 2100 年之间的毫秒时间戳"),
    )
    .optional()
    .describe("相对时间（“近三个月”）的“现在”，毫秒时间戳；默认服务器当前时间"),
  timezone: z
    .string()
    .trim()
    .refine(
      (tz) => tz === "" || isValidTimeZone(tz),
      zodText("must be an IANA time zone, e.g. Asia/Shanghai", "必须是 IANA 时区，例如 Asia/Shanghai"),
    )
    .default("")
    .describe("按哪个时区划分日、月、季度，IANA 名称如 Asia/Shanghai；默认服务配置"),
  // JSON null is "not given" (REST clients send it for an unset object).
  options: nullAsAbsent(
    z
      .object({
        return_debug: z.boolean().default(false),
        max_repair_rounds: z
          .number()
          .int()
          .min(0, zodText("must be between 0 and 3", "必须在 0 到 3 之间"))
          .max(3, zodText("must be between 0 and 3", "必须在 0 到 3 之间"))
          .default(1),
        max_concurrency: z
          .number()
          .int()
          .min(1, zodText("must be between 1 and 16", "必须在 1 到 16 之间"))
          .max(16, zodText("must be between 1 and 16", "必须在 1 到 16 之间"))
          .default(4),
      })
      .strict()
      .default({ return_debug: false, max_repair_rounds: 1, max_concurrency: 4 }),
  ).describe(
    "return_debug 返回调试信息；max_repair_rounds 参数修复轮数（0-3，默认 1）；max_concurrency 同时生成参数的属性数（1-16，默认 4）",
  ),
});

/**
 * The resolver's input with the identities' other name `key` beside
 * unique_identities (never both): `instance_identities` for the RPC (proto
 * JSON calls it `_instance_identities`), `_instance_identities` for the
 * get_logic_properties_values tool, as the platform's tool names it.
 */
function withIdentities<K extends "instance_identities" | "_instance_identities">(key: K) {
  return fields
    .extend({
      [key]: identities.describe(`unique_identities 的另一种写法（平台的 _instance_identities），二者给一个`),
    } as Record<K, typeof identities>)
    .superRefine((raw, ctx) => {
      const v = raw as unknown as Fields & Record<string, Identities>;
      const other = v[key]!;
      if (v.unique_identities.length > 0 && other.length > 0) {
        ctx.addIssue({
          code: "custom",
          path: [key],
          message: zodText(
            "conflicts with unique_identities: give one of the two",
            "与 unique_identities 冲突：二者只能给一个",
          ),
        });
      } else if (v.unique_identities.length === 0 && other.length === 0) {
        ctx.addIssue({
          code: "custom",
          path: ["unique_identities"],
          message: zodText(
            'required: one map of every primary key per instance, e.g. [{"company_id":"company_000001"}]',
            '必填：每个实例一个包含全部主键的映射，例如 [{"company_id":"company_000001"}]',
          ),
        });
      }
      const seen = new Set<string>();
      v.properties.forEach((p, i) => {
        if (seen.has(p))
          ctx.addIssue({
            code: "custom",
            path: ["properties", i],
            message: zodText(`${p} is listed twice`, `${p} 重复出现`),
          });
        seen.add(p);
      });
    })
    .transform((raw) => {
      const { unique_identities, kn_id, ot_id, query, properties, additional_context, now_ms, timezone, options } =
        raw as unknown as Fields;
      const other = (raw as unknown as Record<string, Identities>)[key]!;
      return {
        kn_id,
        ot_id,
        query,
        properties,
        additional_context,
        ...(now_ms !== undefined ? { now_ms } : {}),
        timezone,
        options,
        identities: unique_identities.length > 0 ? unique_identities : other,
      };
    });
}

type Fields = z.output<typeof fields>;
type Identities = z.output<typeof identities>;

/** What the RPC and the REST route validate with. */
export const resolveInput = withIdentities("instance_identities");
/** What the get_logic_properties_values tool validates with: the platform tool's `_instance_identities`. */
export const resolveToolInput = withIdentities("_instance_identities");

export type ResolveInput = z.output<typeof resolveInput>;
