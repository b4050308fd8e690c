import {
  KnSearchResponseSchema,
  RerankConceptsResponseSchema,
  RetrieveKeywordContextResponseSchema,
  RetrieveSchemaResponseSchema,
} from "../../gen/contextloader/knowledge/v1/knowledge_pb";
import { defineTool, type Tool } from "../core/tool";
import { keywordContextAnswer, knSearchAnswer, rerankAnswer, schemaAnswer } from "./answers";
import type { KnowledgeDeps } from "./deps";
import { keywordContextResponse, knSearchResponse, rerankResponse, schemaResponse } from "./encode";
import { keywordContextInput } from "./keyword-context/input";
import { retrieveKeywordContext } from "./keyword-context/retrieve-keyword-context";
import { knSearchInput } from "./kn-search/input";
import { knSearch } from "./kn-search/kn-search";
import { instanceTools } from "./kn-tools/instances";
import { schemaAndActionTools } from "./kn-tools/schema-and-actions";
import { rerankConceptsInput } from "./rerank/input";
import { rerankConcepts } from "./rerank/rerank-concepts";
import { retrieveSchemaInput } from "./schema/input";
import { retrieveSchema } from "./schema/retrieve-schema";

/**
 * The knowledge capabilities as agent tools (MCP): the RPCs' own input
 * schemas (compact_format left out: a tool always answers in the compact
 * shape of answers.ts, written in the caller's output_format) and the same
 * domain functions.
 */
export const knowledgeTools: Tool<KnowledgeDeps>[] = [
  defineTool({
    name: "retrieve_schema",
    title: "召回业务知识网络的 Schema",
    description: `根据用户的完整问题，从业务知识网络召回最相关的关系类型及其两端的对象类型（数据属性、逻辑属性、每个属性可用的条件操作符）和动作类型。这是两步检索的第一步。

使用场景：
1. 回答涉及业务数据的问题前，先了解有哪些对象类型、属性和关系
2. 追问时带上同一个 session_id 再调用，return_union=true 返回本会话累计的 Schema

返回：object_types（id、name、display_key、primary_keys）；properties（每行一个数据属性，object_type 列为所属类型，operations 为允许的条件操作符，"default" 即 default_operations）；logic_properties（指标/算子）；relation_types（from → to）；action_types；session_id。

下一步：问题里提到具体实体（如疾病名"上气道梗阻"）时，用同一 session_id 调用 retrieve_keyword_context，object_type_id 取这里返回的对象类型 id；需要指标值时调用 get_logic_properties_values。`,
    input: retrieveSchemaInput.omit({ compact_format: true }),
    output: RetrieveSchemaResponseSchema,
    run: async (deps, ctx, input) => {
      const r = await retrieveSchema(deps, ctx, { ...input, compact_format: false });
      return { answer: schemaAnswer(r), structured: schemaResponse(r) };
    },
  }),
  defineTool({
    name: "retrieve_keyword_context",
    title: "按关键词召回实例及其一跳邻居",
    description: `在已召回的 Schema 内，根据一个关键词找到指定对象类型下匹配的实例，以及每个实例的一跳邻居（经哪条关系、哪个方向、连到哪个实例）。两步检索的第二步：必须先用同一 session_id 调用 retrieve_schema，且 object_type_id 在该会话的 Schema 中。

关键词可以是用户的日常写法：简称（冠心病、房颤）、别名、同音错字（克隆病）、少字或多字（慢性肾病）；match_type 与 score 说明是怎样匹配上的（exact、contains、alias、tokens、fuzzy、abbreviation…）。

返回：instances（id、name、match_type、score）；neighbors（每行一个邻居：of 为所属实例，relation、direction、type、id、name；already_returned=true 表示本会话已返回过）；properties（按对象类型分表的属性）；statistics；warnings（没有匹配时说明原因和建议）。

下一步：需要某实例的指标时调用 get_logic_properties_values（unique_identities 取实例主键）；没有匹配时按 warnings 的建议换一种写法或换 object_type_id。`,
    input: keywordContextInput.omit({ compact_format: true }),
    output: RetrieveKeywordContextResponseSchema,
    run: async (deps, ctx, input) => {
      const r = await retrieveKeywordContext(deps, ctx, { ...input, compact_format: false });
      return { answer: keywordContextAnswer(r), structured: keywordContextResponse(r) };
    },
  }),
  defineTool({
    name: "kn_search",
    title: "知识网络智能检索（概念 + 实例）",
    description: `基于知识网络的一站式检索：传入完整的问题或一个或多个关键词（空格分隔，最多 5 个），返回相关的对象类型、关系类型、动作类型（概念召回），以及与问题匹配的实例节点（语义实例召回）。

使用场景：
1. 不确定该看哪些类型、也想直接拿到相关实例时（比 retrieve_schema + retrieve_keyword_context 少一次调用）
2. 多轮对话：带上 session_id，retrieval_config.concept_retrieval.return_union=true 返回历次召回的并集
3. only_schema=true 只要概念，不要实例

返回：object_types、properties、logic_properties、relation_types、action_types；nodes（按对象类型分表，每行一个实例：name、score、主键与数据属性）；message（没有实例时说明原因）；session_id；warnings。

下一步：需要实例的邻居时调用 retrieve_keyword_context；需要指标值时调用 get_logic_properties_values。`,
    input: knSearchInput,
    output: KnSearchResponseSchema,
    run: async (deps, ctx, input) => {
      const r = await knSearch(deps, ctx, input);
      return { answer: knSearchAnswer(r), structured: knSearchResponse(r) };
    },
  }),
  defineTool({
    name: "knowledge_rerank",
    title: "概念重排序",
    description: `对一组概念（对象类型、关系类型）按与问题的相关性重新排序，并过滤掉无关的概念。action="llm"（默认，需要服务配置了 LLM）由大模型判断；action="vector" 用向量相似度。

使用场景：已有一批候选概念（如 retrieve_schema 或 kn_search 的结果），需要只保留与问题相关的部分再继续。

返回：concepts（type、id、name、score、rank，按相关性排序）；details（原样返回的 concept_detail）；filtered_count（过滤后保留的概念数，即 concepts 的行数）。`,
    input: rerankConceptsInput,
    output: RerankConceptsResponseSchema,
    run: async (deps, ctx, input) => {
      const r = await rerankConcepts(deps, ctx, input);
      return { answer: rerankAnswer(r), structured: rerankResponse(r) };
    },
  }),
  ...schemaAndActionTools,
  ...instanceTools,
];
