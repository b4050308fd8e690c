import type { MessageInitShape } from "@bufbuild/protobuf";
import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import type {
  ExpandContextWindowResponseSchema,
  ExtractSearchKeywordsResponseSchema,
  GetMemoryDetailResponseSchema,
  HandoffResponseSchema,
  ListToolsResponseSchema,
  RecallHandoffSchema,
  RecallResponseSchema,
  RememberConversationResponseSchema,
  SearchMemoriesResponseSchema,
  StoreMemoryResponseSchema,
} from "../../gen/contextloader/memrecall/v1/memrecall_pb";
import type { ExpandContextWindowResult } from "./expand-context-window";
import type { HandoffResult } from "./handoff";
import type { Extraction } from "./keyword-extraction";
import type { MemoryDetail } from "./read";
import type { RecallEvent, RecallResult } from "./recall/events";
import type { RememberResult } from "./remember/remember";
import type { SearchOutput } from "./search";
import type { ToolDefinition } from "./tool-definitions";
import type { StoredMemory } from "./write";

/** Domain results as MemRecallService's proto messages: field renames and timestamps, nothing decided here. */

export function searchMemoriesResponse(out: SearchOutput): MessageInitShape<typeof SearchMemoriesResponseSchema> {
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
      supersedes: r.supersedes,
      supersededBy: r.superseded_by,
      sensitive: r.sensitive,
      redacted: r.redacted,
      // Results cached before memories had these times lack them: none is shown, rather than a wrong one.
      ...(r.stated_at ? { statedAt: timestampFromDate(new Date(r.stated_at)) } : {}),
      ...(r.valid_until ? { validUntil: timestampFromDate(new Date(r.valid_until)) } : {}),
    })),
    searchQueryExpanded: out.search_query_expanded,
    message: out.message,
  };
}

export function memoryDetailResponse(m: MemoryDetail): MessageInitShape<typeof GetMemoryDetailResponseSchema> {
  return {
    success: true,
    ...memoryFields(m),
    keywords: m.keywords,
    statedAt: timestampFromDate(m.stated_at),
    ...(m.valid_until ? { validUntil: timestampFromDate(m.valid_until) } : {}),
  };
}

/** What a memory says of itself in every answer that holds it whole (the detail, a recall's memories). */
function memoryFields(
  m: Pick<
    MemoryDetail,
    | "memory_key"
    | "summary"
    | "content"
    | "memory_type"
    | "created_at"
    | "updated_at"
    | "metadata"
    | "content_truncated"
    | "supersedes"
    | "superseded_by"
    | "sensitive"
    | "redacted"
  >,
) {
  return {
    memoryKey: m.memory_key,
    summary: m.summary,
    content: m.content,
    memoryType: m.memory_type,
    createdAt: timestampFromDate(m.created_at),
    updatedAt: timestampFromDate(m.updated_at),
    metadata: m.metadata,
    contentTruncated: m.content_truncated,
    supersedes: m.supersedes,
    supersededBy: m.superseded_by,
    sensitive: m.sensitive,
    redacted: m.redacted,
  };
}

export function extractKeywordsResponse(r: Extraction): MessageInitShape<typeof ExtractSearchKeywordsResponseSchema> {
  return {
    success: true,
    keywords: r.keywords,
    expandedQuery: r.expanded_query,
    method: r.method,
    message: r.message,
  };
}

export function storeMemoryResponse({
  record,
  created,
}: StoredMemory): MessageInitShape<typeof StoreMemoryResponseSchema> {
  return {
    memoryKey: record.memory_key,
    created,
    contentTruncated: record.content_truncated,
    keywords: record.keywords,
    createdAt: timestampFromDate(record.created_at),
    updatedAt: timestampFromDate(record.updated_at),
    sensitive: record.sensitive,
  };
}

export function expandContextWindowResponse(
  r: ExpandContextWindowResult,
): MessageInitShape<typeof ExpandContextWindowResponseSchema> {
  return {
    approved: r.approved,
    newSize: r.new_size,
    iteration: r.iteration,
    maxIterations: r.max_iterations,
    message: r.message,
  };
}

export function handoffResponse(r: HandoffResult): MessageInitShape<typeof HandoffResponseSchema> {
  return { success: r.success, message: r.message, taskCompleted: r.task_completed };
}

export function listToolsResponse(tools: ToolDefinition[]): MessageInitShape<typeof ListToolsResponseSchema> {
  return { tools: tools.map((t) => ({ type: t.type, function: t.function })) };
}

/** A recall event as a RecallResponse: the oneof case named after the event's kind. */
export function recallResponse(e: RecallEvent): MessageInitShape<typeof RecallResponseSchema> {
  const base = { sequence: e.sequence, elapsedMs: e.elapsed_ms };
  switch (e.kind) {
    case "iteration_started":
      return {
        ...base,
        event: {
          case: "iterationStarted",
          value: {
            iteration: e.iteration,
            maxIterations: e.max_iterations,
            windowSize: e.window_size,
            messagesTotal: e.messages_total,
          },
        },
      };
    case "tool_call":
      return {
        ...base,
        event: {
          case: "toolCall",
          value: {
            iteration: e.iteration,
            callId: e.call_id,
            name: e.name,
            arguments: e.arguments,
            unparsedArguments: e.unparsed_arguments,
          },
        },
      };
    case "tool_result":
      return {
        ...base,
        event: {
          case: "toolResult",
          value: {
            iteration: e.iteration,
            callId: e.call_id,
            name: e.name,
            ok: e.ok,
            hits: e.hits.map((h) => ({
              memoryKey: h.memory_key,
              relevanceScore: h.relevance_score,
              supersededBy: h.superseded_by,
            })),
            memoryKey: e.memory_key,
            keywords: e.keywords,
            approved: e.approved,
            newSize: e.new_size,
            summary: e.summary,
            errorReason: e.error_reason,
            errorMessage: e.error_message,
            durationMs: e.duration_ms,
          },
        },
      };
    case "window_expanded":
      return {
        ...base,
        event: {
          case: "windowExpanded",
          value: { iteration: e.iteration, fromSize: e.from_size, toSize: e.to_size, reason: e.reason },
        },
      };
    case "handoff":
      return { ...base, event: { case: "handoff", value: recallHandoff(e.result) } };
  }
}

export function recallHandoff(r: RecallResult): MessageInitShape<typeof RecallHandoffSchema> {
  return {
    reason: r.reason,
    searchSummary: r.search_summary,
    relevantMemoryKeys: r.relevant_memory_keys,
    confidence: r.confidence,
    needsMoreInfo: r.needs_more_info,
    followUpQuestion: r.follow_up_question,
    iterationUsed: r.iteration_used,
    contextWindowUsed: r.context_window_used,
    reasoning: r.reasoning,
    memories: r.memories.map((m) => ({
      ...memoryFields(m),
      relevanceScore: m.relevance_score,
      keywords: m.keywords.map((k) => k.keyword),
    })),
    strategy: r.strategy,
    message: r.message,
    searches: r.searches,
    llmCalls: r.llm_calls,
    toolErrors: r.tool_errors,
  };
}

export function rememberResponse(r: RememberResult): MessageInitShape<typeof RememberConversationResponseSchema> {
  return {
    operations: r.operations.map((o) => ({
      operation: o.operation,
      memoryKey: o.memory_key,
      memoryType: o.memory_type,
      summary: o.summary,
      sourceMessages: o.source_messages,
      reason: o.reason,
      supersedes: o.supersedes,
      sensitive: o.sensitive,
      statedAt: timestampFromDate(new Date(o.stated_at)),
    })),
    mode: r.mode,
    applied: r.applied,
    llmCalls: r.llm_calls,
    message: r.message,
    ...r.counts,
  };
}
