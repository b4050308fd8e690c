import { z } from "zod";
import { parsedJson } from "../../core/json";
import { nullAsAbsent } from "../../errors/validation";

export const MAX_CONCEPTS = 5000;
const MAX_BATCH = 512;

// Proto JSON sends an unset string as ""; REST clients send null for an unset field: both mean the default.
const unsetIsDefault = (v: unknown) => (v === "" || v === null ? undefined : v);

const concept = z.strictObject({
  concept_type: z.enum(["object_type", "relation_type"], {
    error: 'concept_type must be "object_type" or "relation_type"',
  }),
  concept_id: z.string().trim().min(1, "concept_id is required").max(256),
  concept_name: z.string().trim().min(1, "concept_name is required").max(512),
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
            .min(1, "query_understanding.origin_query is required: the user's question")
            .max(4000),
          processed_query: z
            .string()
            .trim()
            .min(
              1,
              "query_understanding.processed_query is required (the origin_query again if there was no processing)",
            )
            .max(4000),
          intent: nullAsAbsent(
            z
              .array(
                z.object({
                  query_segment: nullAsAbsent(z.string().default("")),
                  confidence: nullAsAbsent(
                    z
                      .number()
                      .min(0, "confidence must be between 0 and 1")
                      .max(1, "confidence must be between 0 and 1")
                      .optional(),
                  ),
                  reasoning: nullAsAbsent(z.string().default("")),
                  related_concepts: nullAsAbsent(z.array(z.record(z.string(), parsedJson)).default([])),
                }),
              )
              .max(50, "at most 50 intents")
              .default([]),
          ),
        },
        {
          error: (issue) =>
            issue.input === undefined
              ? "query_understanding is required: {origin_query, processed_query, intent?}"
              : "query_understanding must be an object",
        },
      )
      .describe(
        "对问题的理解：origin_query 原问题，processed_query 处理后的问题（没有处理就再填一次原问题），intent 可选",
      ),
    concepts: z
      .array(concept)
      .min(1, "concepts is required: at least one {concept_type, concept_id, concept_name}")
      .max(MAX_CONCEPTS, `at most ${MAX_CONCEPTS} concepts`)
      .describe(
        "要排序的概念：concept_type（object_type 或 relation_type）、concept_id、concept_name，concept_detail 可放 comment 等",
      ),
    action: z
      .preprocess(
        unsetIsDefault,
        z.enum(["llm", "vector"], { error: 'action must be "llm" or "vector"' }).default("llm"),
      )
      .describe("llm（默认，需服务配置 LLM）由大模型挑选并排序；vector 按向量相似度"),
    batch_size: nullAsAbsent(
      z
        .number({ error: `batch_size must be a whole number between 1 and ${MAX_BATCH}` })
        .int(`batch_size must be a whole number between 1 and ${MAX_BATCH}`)
        .min(1, `batch_size must be between 1 and ${MAX_BATCH}`)
        .max(MAX_BATCH, `batch_size must be between 1 and ${MAX_BATCH}`)
        .default(128),
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
          message: `${c.concept_type} ${c.concept_id} is listed twice (first at concepts[${first}])`,
        });
      else seen.set(key, i);
    });
  });
export type RerankConceptsInput = z.output<typeof rerankConceptsInput>;
