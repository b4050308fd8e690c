import type { CallContext } from "../../core/call-context";
import { llmNotConfigured } from "../../errors/common";
import { type Language, type Text, text } from "../../errors/text";
import type { KnSearchDeps } from "../deps";
import type { KnSearchAnswer } from "./answer";
import { questionOf, recallConcepts, shapeSchema } from "./concepts";
import { type KnSearchInput, keywordsOf, MAX_KEYWORDS } from "./input";
import { type InstanceRecall, recallInstances } from "./instances";

/** The spec's note when no instance comes back (data-retrieval's words, the Chinese); the reason follows it. */
const NO_INSTANCES = text("No related instance data was found", "未查询到相关实例数据");

/**
 * kn_search computed here over the knowledge-network backend: concept recall
 * (concepts.ts), then the schema shaped for the answer and the instances
 * searched side by side (instances.ts), the nodes recorded in the session
 * (KnowledgeSessions.returnNodes). With only_schema no instance is searched.
 */
export async function knSearchNative(
  deps: KnSearchDeps,
  ctx: CallContext,
  input: KnSearchInput,
  sessionId: string,
): Promise<KnSearchAnswer> {
  const {
    concept_retrieval: concept,
    semantic_instance_retrieval: semantic,
    property_filter: filter,
  } = input.retrieval_config;
  if (!concept.skip_llm && !deps.llm) {
    throw llmNotConfigured({
      needs: text(
        "retrieval_config.concept_retrieval.skip_llm=false needs an LLM",
        "retrieval_config.concept_retrieval.skip_llm=false 需要 LLM",
      ),
      field: {
        field: "retrieval_config.concept_retrieval.skip_llm",
        description: text("no LLM is configured; use skip_llm=true", "没有配置 LLM；请用 skip_llm=true"),
      },
      instead: text(
        "Call again with skip_llm=true (the default): relation types are then ranked by the reranker or by embeddings and tokens.",
        "用 skip_llm=true（默认值）再调用：这时关系类型由重排模型，或由向量与词匹配排序。",
      ),
    });
  }
  const concepts = await recallConcepts(deps, ctx, input, sessionId);
  const keywords = keywordsOf(input.query);
  const [schema, found] = await Promise.all([
    shapeSchema(deps, ctx, input, concepts),
    input.only_schema || concepts.round.length === 0
      ? Promise.resolve<InstanceRecall>({ nodes: [], searched: [], warnings: [] })
      : recallInstances(deps, ctx, concepts.round, { question: questionOf(input), keywords }, semantic, filter),
  ]);
  const answer: KnSearchAnswer = {
    session_id: sessionId,
    object_types: schema.object_types,
    relation_types: schema.relation_types,
    action_types: schema.action_types,
    nodes: undefined,
    message: undefined,
    warnings: [
      ...concepts.warnings,
      ...schema.warnings,
      ...found.warnings,
      ...droppedKeywords(input.query, ctx.language),
    ],
  };
  if (input.only_schema) return answer;
  const returned =
    found.searched.length === 0
      ? { nodes: [], seenBefore: 0 }
      : await deps.sessions.returnNodes(
          deps.sessions.pick(""),
          ctx.caller,
          sessionId,
          input.query,
          found.nodes,
          concept.return_union,
        );
  answer.nodes = returned.nodes;
  if (returned.nodes.length === 0) {
    const why = whyNothing(
      input,
      concepts.round.map((o) => o.id),
      found.searched,
      returned.seenBefore,
    );
    answer.message = text(`${NO_INSTANCES.en}: ${why.en}`, `${NO_INSTANCES.zh}：${why.zh}`)[ctx.language];
  }
  return answer;
}

/** Why no node came back, and what to try, for the agent. */
function whyNothing(input: KnSearchInput, recalled: string[], searched: string[], seenBefore: number): Text {
  const cfg = input.retrieval_config.semantic_instance_retrieval;
  if (recalled.length === 0)
    return text(
      "No object type related to the query was recalled. Describe the question with the names of the knowledge network's concepts, or add information in additional_context, and try again.",
      "没有召回到与查询相关的对象类型。请换用知识网络中的概念名称描述问题，或在 additional_context 中补充信息后重试。",
    );
  if (searched.length === 0)
    return text(
      `The recalled object types (${recalled.join(", ")}) have no property that can be searched by text.`,
      `召回的对象类型（${recalled.join("、")}）没有可按文本检索的属性。`,
    );
  if (seenBefore > 0) {
    return text(
      `The ${seenBefore} instance(s) found were already returned in earlier rounds of this session. To return them again, set retrieval_config.concept_retrieval.return_union=true.`,
      `找到的 ${seenBefore} 个实例在本会话之前的轮次中已经返回过。需要再次返回时，设置 retrieval_config.concept_retrieval.return_union=true。`,
    );
  }
  return text(
    `In object types ${searched.join(", ")}, no instance reaches min_direct_relevance=${cfg.min_direct_relevance} of direct relevance to "${input.query}". ` +
      "Use keywords from the instances' names instead (several keywords separated by spaces), or lower retrieval_config.semantic_instance_retrieval.min_direct_relevance.",
    `在对象类型 ${searched.join("、")} 中，没有实例与「${input.query}」的直接相关度达到 min_direct_relevance=${cfg.min_direct_relevance}。` +
      "可以改用实例名称中的关键词（多个关键词用空格隔开），或调低 retrieval_config.semantic_instance_retrieval.min_direct_relevance。",
  );
}

/** The keywords past MAX_KEYWORDS are not searched: said, never silently. */
function droppedKeywords(query: string, language: Language): { target: string; reason: string; message: string }[] {
  const parts = [...new Set(query.split(/\s+/).filter((p) => p !== ""))];
  if (parts.length <= MAX_KEYWORDS) return [];
  return [
    {
      target: "query",
      reason: "TOO_MANY_KEYWORDS",
      message: text(
        `only the first ${MAX_KEYWORDS} keywords were searched for instances; not searched: ${parts.slice(MAX_KEYWORDS).join(" ")} (call again with those)`,
        `只用前 ${MAX_KEYWORDS} 个关键词搜索了实例；没有搜索的：${parts.slice(MAX_KEYWORDS).join(" ")}（请用它们再调用一次）`,
      )[language],
    },
  ];
}
