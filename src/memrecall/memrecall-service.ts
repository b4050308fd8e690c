import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import type { ConnectRouter } from "@connectrpc/connect";
import {
  DeleteMemoryRequestSchema,
  ExpandContextWindowRequestSchema,
  ExtractSearchKeywordsRequestSchema,
  GetMemoryDetailRequestSchema,
  HandoffRequestSchema,
  MemRecallService,
  SearchMemoriesRequestSchema,
  StoreMemoryRequestSchema,
} from "../../gen/contextloader/memrecall/v1/memrecall_pb";
import { validateRequest } from "../errors/validation";
import { callContext } from "../server/interceptors";
import { expandContextWindow } from "./expand-context-window";
import { handoff } from "./handoff";
import { extractKeywords } from "./keyword-extraction";
import type { MemoriesDeps } from "./memories-deps";
import { ownerOf } from "./owner";
import { getMemoryDetail } from "./read";
import { searchMemories } from "./search";
import { deleteMemory, storeMemory } from "./write";
import { toolDefinitions } from "./tool-definitions";
import {
  deleteMemoryInput,
  expandContextWindowInput,
  extractKeywordsInput,
  getMemoryDetailInput,
  handoffInput,
  searchMemoriesInput,
  storeMemoryInput,
} from "./inputs";

export interface MemRecallDeps extends MemoriesDeps {
  /** Largest context window ExpandContextWindow grants. */
  maxContextWindow: number;
}

/**
 * Registers MemRecallService: every call needs the caller's account (checked
 * first, before the request), then decode and validate, call the tool, encode.
 */
export function registerMemRecall(router: ConnectRouter, deps: MemRecallDeps): void {
  const expandInput = expandContextWindowInput(deps.maxContextWindow);
  const tools = toolDefinitions(deps.maxContextWindow);
  const context = (ctx: Parameters<typeof callContext>[0]) => {
    const c = callContext(ctx);
    ownerOf(c.caller);
    return c;
  };
  router.service(MemRecallService, {
    async searchMemories(req, ctx) {
      const c = context(ctx);
      const out = await searchMemories(deps, c, validateRequest(SearchMemoriesRequestSchema, req, searchMemoriesInput));
      return {
        success: true,
        totalFound: out.results.length,
        results: out.results.map((r) => ({
          memoryKey: r.memory_key,
          summary: r.summary,
          contentPreview: r.content_preview,
          memoryType: r.memory_type,
          relevanceScore: r.relevance_score,
          createdAt: timestampFromDate(new Date(r.created_at)),
          keywords: r.keywords,
        })),
        searchQueryExpanded: out.search_query_expanded,
        message: out.message,
      };
    },
    async getMemoryDetail(req, ctx) {
      const c = context(ctx);
      const m = await getMemoryDetail(deps, c, validateRequest(GetMemoryDetailRequestSchema, req, getMemoryDetailInput).memory_key);
      return {
        success: true,
        memoryKey: m.memory_key,
        summary: m.summary,
        content: m.content,
        memoryType: m.memory_type,
        createdAt: timestampFromDate(m.created_at),
        updatedAt: timestampFromDate(m.updated_at),
        metadata: m.metadata,
        keywords: m.keywords,
        contentTruncated: m.content_truncated,
      };
    },
    async extractSearchKeywords(req, ctx) {
      const c = context(ctx);
      const input = validateRequest(ExtractSearchKeywordsRequestSchema, req, extractKeywordsInput);
      const r = await extractKeywords(deps.llm, c, input.query, input.context, input.max_keywords);
      return {
        success: true,
        keywords: r.keywords,
        expandedQuery: r.expanded_query,
        method: r.method,
        message: r.note ?? (r.method === "fallback" ? "未配置 LLM（LLM_BASE_URL），使用本地提取（jieba TF-IDF + 时间表达式）" : ""),
      };
    },
    async storeMemory(req, ctx) {
      const c = context(ctx);
      const { record, created } = await storeMemory(deps, c, validateRequest(StoreMemoryRequestSchema, req, storeMemoryInput));
      return {
        memoryKey: record.memory_key,
        created,
        contentTruncated: record.content_truncated,
        keywords: record.keywords,
        createdAt: timestampFromDate(record.created_at),
        updatedAt: timestampFromDate(record.updated_at),
      };
    },
    async deleteMemory(req, ctx) {
      const c = context(ctx);
      return { deleted: await deleteMemory(deps, c, validateRequest(DeleteMemoryRequestSchema, req, deleteMemoryInput).memory_key) };
    },
    expandContextWindow(req, ctx) {
      context(ctx);
      const r = expandContextWindow(validateRequest(ExpandContextWindowRequestSchema, req, expandInput));
      return { approved: r.approved, newSize: r.new_size, iteration: r.iteration, maxIterations: r.max_iterations, message: r.message };
    },
    handoff(req, ctx) {
      const c = context(ctx);
      const input = validateRequest(HandoffRequestSchema, req, handoffInput);
      c.log.info(
        {
          confidence: input.confidence,
          relevant_memory_keys: input.relevant_memory_keys.length,
          needs_more_info: input.needs_more_info,
          iteration_used: input.iteration_used,
          context_window_used: input.context_window_used,
        },
        "memory recall handed off",
      );
      const r = handoff(input);
      return { success: r.success, message: r.message, taskCompleted: r.task_completed };
    },
    listTools(_req, ctx) {
      context(ctx);
      return { tools: tools.map((t) => ({ type: t.type, function: t.function })) };
    },
  });
}
