import type { CallContext } from "../core/call-context";
import { extractKeywords } from "./keyword-extraction";
import type { MemoriesDeps } from "./memories-deps";
import { digest } from "./owner";

/** Spec §6.1: an expansion is cached for 5 minutes. */
const EXPANSION_TTL_MS = 5 * 60_000;

/**
 * The LLM's keywords and restated query for a semantic or hybrid search,
 * cached 5 minutes (spec §6.1). No LLM: none. A failing LLM does not fail the
 * search: it runs on the query, and a note for the answer's message says so
 * (pushed onto `notes`, which is how the caller knows not to cache the search).
 */
export async function expandQuery(
  deps: MemoriesDeps,
  ctx: CallContext,
  query: string,
  keywords: string[],
  notes: string[],
): Promise<string[]> {
  if (!deps.llm) return [];
  const key = `cl:memrecall:expand:${digest({ query, keywords })}`;
  const hit = await deps.sessions.getJson<string[]>(key).catch(() => undefined);
  if (hit) return hit;
  const extraction = await extractKeywords(deps.llm, ctx, [query, ...keywords].join(" "), "", 5);
  if (extraction.method !== "llm") {
    // Neither the expansion nor the search is cached: the next search asks the LLM again.
    notes.push(`查询扩展不可用（${extraction.note ?? "LLM 无结果"}），已按原查询搜索`);
    return [];
  }
  const terms = [
    ...extraction.keywords.map((k) => k.keyword),
    ...(extraction.expanded_query ? [extraction.expanded_query] : []),
  ];
  deps.sessions
    .setJson(key, terms, EXPANSION_TTL_MS)
    .catch((err: unknown) => ctx.log.warn({ err }, "cache write failed"));
  return terms;
}
