import type { Json } from "../core/json";
import { compact, table } from "../core/tables";
import type { Extraction } from "./keyword-extraction";
import type { MemoryDetail } from "./read";
import type { RecallResult } from "./recall/events";
import type { RememberResult } from "./remember/remember";
import type { SearchOutput } from "./search";
import type { StoredMemory } from "./write";

/**
 * MemRecall's answers in the compact shape tools return: the spec's field
 * names (an agent passes memory_key on), lists of like items as tables,
 * empty fields left out.
 */

export function searchAnswer(out: SearchOutput): Json {
  return compact({
    total_found: out.results.length,
    // The flags only where they are set: a column that is false in every row says nothing.
    results: table(
      out.results.map(({ sensitive, redacted, stated_at, valid_until, ...r }) => ({
        ...r,
        sensitive: sensitive || undefined,
        redacted: redacted || undefined,
        // The times only where they tell something: stated apart from stored, or no longer holding.
        stated_at: stated_at === r.created_at ? undefined : stated_at,
        valid_until: valid_until || undefined,
      })),
    ),
    search_query_expanded: out.search_query_expanded,
    message: out.message,
  });
}

export function detailAnswer(m: MemoryDetail): Json {
  return compact({
    memory_key: m.memory_key,
    sensitive: m.sensitive || undefined,
    redacted: m.redacted || undefined,
    summary: m.summary,
    memory_type: m.memory_type,
    created_at: m.created_at.toISOString(),
    updated_at: m.updated_at.toISOString(),
    stated_at: m.stated_at.getTime() === m.created_at.getTime() ? undefined : m.stated_at.toISOString(),
    valid_until: m.valid_until?.toISOString(),
    keywords: table(m.keywords.map((k) => ({ ...k }))),
    content_truncated: m.content_truncated,
    supersedes: m.supersedes,
    superseded_by: m.superseded_by,
    metadata: m.metadata,
    content: m.content,
  });
}

export function extractionAnswer(r: Extraction): Json {
  return compact({
    keywords: table(r.keywords.map((k) => ({ ...k }))),
    expanded_query: r.expanded_query,
    method: r.method,
    message: r.message,
  });
}

export function storedAnswer({ record, created }: StoredMemory): Json {
  return {
    memory_key: record.memory_key,
    created,
    content_truncated: record.content_truncated,
    ...(record.sensitive ? { sensitive: true } : {}),
    keywords: table(record.keywords.map((k) => ({ ...k }))),
    created_at: record.created_at.toISOString(),
    updated_at: record.updated_at.toISOString(),
  };
}

/** The recall's handoff: the spec's fields, then the memories it names as one table (content last, it is the longest). */
export function recallAnswer(r: RecallResult): Json {
  return compact({
    strategy: r.strategy,
    reason: r.reason,
    relevant_memory_keys: r.relevant_memory_keys,
    confidence: r.confidence,
    needs_more_info: r.needs_more_info,
    follow_up_question: r.follow_up_question,
    search_summary: r.search_summary,
    reasoning: r.reasoning,
    iteration_used: r.iteration_used,
    context_window_used: r.context_window_used,
    searches: r.searches,
    llm_calls: r.llm_calls,
    tool_errors: r.tool_errors,
    memories: table(
      r.memories.map((m) => ({
        memory_key: m.memory_key,
        summary: m.summary,
        memory_type: m.memory_type,
        relevance_score: m.relevance_score,
        updated_at: m.updated_at.toISOString(),
        superseded_by: m.superseded_by,
        redacted: m.redacted || undefined,
        content: m.content,
      })),
    ),
  });
}

/** RememberConversation's decisions as one table; counts and mode first. */
export function rememberAnswer(r: RememberResult): Json {
  return compact({
    mode: r.mode,
    applied: r.applied,
    llm_calls: r.llm_calls || undefined,
    message: r.message,
    operations: table(
      r.operations.map(({ sensitive, supersedes, source_messages, ...o }) => ({
        ...o,
        source_messages: source_messages.join(","),
        supersedes: supersedes || undefined,
        sensitive: sensitive || undefined,
      })),
    ),
  });
}
