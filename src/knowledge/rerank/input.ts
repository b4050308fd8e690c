import { z } from "zod";
import { parsedJson } from "../../core/json";
import { zodText } from "../../errors/text";
import { nullAsAbsent } from "../../errors/validation";

export const MAX_CONCEPTS = 5000;
const MAX_BATCH = 512;

// Proto JSON sends an unset string as ""; REST clients send null for an unset field: both mean the default.
const unsetIsDefault = (v: unknown) => (v === "" || v === null ? undefined : v);

const REQUIRED = zodText("required", "必填");
const CONFIDENCE_RANGE = zodText("must be between 0 and 1", "必须在 0 到 1 之间");
const BATCH_WHOLE = zodText(`must be a whole number between 1 and ${MAX_BATCH}`, `必须是 1 到 ${MAX_BATCH} 之间的整数`);
const BATCH_RANGE = zodText(`must be between 1 and ${MAX_BATCH}`, `必须在 1 到 ${MAX_BATCH} 之间`);

const concept = z.strictObject({
  concept_type: z.enum(["object_type", "relation_type"], {
    error: zodText('must be "object_type" or "relation_type"', '必须是 "object_type" 或 "relation_type"'),
  }),
  concept_id: z.string().trim().min(1, REQUIRED).max(256),
  concept_name: z.string().trim().min(1, REQUIRED).max(512),
  concept_detail: nullAsAbsent(z.record(z.string(), parsedJson).default({})),
});

/** knowledge_rerank's input (data-retrieval-tools §7.2), with the spec's defaults. */
export const rerankConceptsInput = z
  .strictObject({
    query_understanding: z
      .strictObject(
        {
          origin_query: z
            .string()
            .trim()
            .min(1, zodText("required: the user's question", "必填：用户的问题"))
            .max(4000),
          processed_query: z
            .string()
            .trim()
            .min(
              1,
              zodText(
                "required (the origin_query again if there was no processing)",
                "必填（没有处理过就再填一次 origin_query）",
              ),
            )
            .max(4000),
          intent: nullAsAbsent(
            z
              .array(
                z.object({
                  query_segment: nullAsAbsent(z.string().default("")),
                  confidence: nullAsAbsent(z.number().min(0, CONFIDENCE_RANGE).max(1, CONFIDENCE_RANGE).optional()),
                  reasoning: nullAsAbsent(z.string().default("")),
                  related_concepts: nullAsAbsent(z.array(z.record(z.string(), parsedJson)).default([])),
                }),
              )
              .max(50, zodText("at most 50 intents", "最多 50 个意图"))
              .default([]),
          ),
        },
        {
          error: (issue) =>
            issue.input === undefined
              ? zodText(
                  "required: {origin_query, processed_query, intent?}",
                  "必填：{origin_query, processed_query, intent?}",
                )
              : zodText("must be an object", "必须是对象"),
        },
      )
      .describe(
        "对问题的理解：origin_query 原问题，processed_query 处理后的问题（没有处理就再填一次原问题），intent 可选",
      ),
    concepts: z
      .array(concept)
      .min(
        1,
        zodText(
          "required: at least one {concept_type, concept_id, concept_name}",
          "必填：至少一个 {concept_type, concept_id, concept_name}",
        ),
      )
      .max(MAX_CONCEPTS, zodText(`at most ${MAX_CONCEPTS} concepts`, `最多 ${MAX_CONCEPTS} 个概念`))
      .describe(
        "要排序的概念：concept_type（object_type 或 relation_type）、concept_id、concept_name，concept_detail 可放 comment 等",
      ),
    action: z
      .preprocess(
        unsetIsDefault,
        z
          .enum(["llm", "vector"], { error: zodText('must be "llm" or "vector"', '必须是 "llm" 或 "vector"') })
          .default("llm"),
      )
      .describe("llm（默认，需服务配置 LLM）由大模型挑选并排序；vector 按向量相似度"),
    batch_size: nullAsAbsent(
      z.number({ error: BATCH_WHOLE }).int(BATCH_WHOLE).min(1, BATCH_RANGE).max(MAX_BATCH, BATCH_RANGE).default(128),
    ).describe("每批交给大模型的概念数（1-512，默认 128）"),
    session_id: nullAsAbsent(z.string().max(256).default("")).describe("会话 ID，仅用于日志"),
  })
  .superRefine((v, ctx) => {
    const seen = new Map<string, number>();
    v.concepts.forEach((c, i) => {
      const key = `${c.concept_type}\u0000${c.concept_id}`;
      const first = seen.get(key);
      if (first !== undefined)
        ctx.addIssue({
          code: "custom",
          path: ["concepts", i, "concept_id"],
          message: zodText(
            `${c.concept_type} ${c.concept_id} is listed twice (first at concepts[${first}])`,
            `${c.concept_type} ${c.concept_id} 重复出现（第一次在 concepts[${first}]）`,
          ),
        });
      else seen.set(key, i);
    });
  });
export type RerankConceptsInput = z.output<typeof rerankConceptsInput>;
