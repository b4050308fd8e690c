import { z } from "zod";
import type { CallContext } from "../core/call-context";
import { normalizeText } from "../core/text";
import { type Text, text } from "../errors/text";
import { ToolError } from "../errors/tool-error";
import { completeWithin } from "../upstream/llm-client";
import { readJsonObject } from "../upstream/llm-json";
import type { MemoriesDeps } from "./memories-deps";
import { digest } from "./owner";

/** Spec §6.1: an expansion is cached for 5 minutes. */
const EXPANSION_TTL_MS = 5 * 60_000;
/** The rewrite may take this long, whatever the LLM client's own timeout: a search is waiting for it. */
export const EXPANSION_TIMEOUT_MS = 4_000;
/** Terms kept from the LLM's answer, at most. */
const MAX_TERMS = 10;
/** A term longer than this is a sentence, not a search term. */
const MAX_TERM_CHARS = 60;

/**
 * The prompt of the rewrite. The spec names the step (§2, "使用 LLM 扩展查询
 * 关键词") but not its words; these ask for what a memory may say instead of
 * the query: the other language, synonyms, the full form of an abbreviation
 * and back, and the usual name of a thing the query only describes — the
 * three ways the evaluation sets' misses differ from their memories.
 */
export function rewritePrompt(query: string, keywords: readonly string[]): string {
  return `用户要在自己的记忆库里找一条记忆。记忆可能用中文、英文或中英混写，用词往往和查询不同。
请写出这条记忆里可能出现、而查询里没有的搜索词。

查询: ${query}
${keywords.length > 0 ? `已知关键词: ${keywords.join(", ")}\n` : ""}
要求:
- 查询中关键词的另一种语言写法（中文↔英文）
- 同义词、常见的另一种说法
- 缩写的全称，全称的常用缩写（如 日活 ↔ DAU，k8s ↔ Kubernetes）
- 查询只描述、没有说出名字的事物的常用名称（如"登生产前要先连的那台机器" → 堡垒机, bastion host）
- 不要编造查询中没有的事实（人名、数字、日期）；每个词不超过 6 个字或 4 个英文单词；最多 ${MAX_TERMS} 个

只返回 JSON:
{"terms": ["词1", "词2"], "expanded_query": "用记忆可能的说法重写的查询"}`;
}

/** The rewrite's answer; the spec's extraction shape ({keywords: [{keyword}]}) is read too. */
const answerSchema = z.object({
  terms: z.array(z.unknown()).optional(),
  keywords: z.array(z.unknown()).optional(),
  expanded_query: z.string().nullish(),
});

/**
 * The LLM's rewrite of a semantic or hybrid query: the terms a memory may
 * use instead of the query's words, and the query restated (cached 5 minutes,
 * spec §6.1). No LLM: none. One attempt, at most EXPANSION_TIMEOUT_MS: a
 * failing or slow LLM does not fail the search, which runs on the query, and
 * a note for the answer's message says so (pushed onto `notes`, which is how
 * the caller knows not to cache the search). The terms are searched for,
 * never trusted: they weigh as equivalents, below the words typed.
 */
export async function expandQuery(
  deps: MemoriesDeps,
  ctx: CallContext,
  query: string,
  keywords: string[],
  notes: Text[],
): Promise<string[]> {
  if (!deps.llm) return [];
  const key = `cl:memrecall:rewrite:${digest({ query, keywords })}`;
  const hit = await deps.sessions.getJson<string[]>(key).catch(() => undefined);
  if (hit) return hit;
  const answer = await completeWithin(deps.llm, ctx, rewritePrompt(query, keywords), EXPANSION_TIMEOUT_MS);
  if (!answer.ok) {
    const why = answer.timedOut
      ? text(`over ${EXPANSION_TIMEOUT_MS} ms`, `超过 ${EXPANSION_TIMEOUT_MS} ms`)
      : answer.error instanceof ToolError
        ? answer.error.text
        : text("internal error", "内部错误");
    ctx.log.warn({ err: answer.error }, "query rewrite: the LLM failed; searching on the query");
    notes.push(
      text(
        `query expansion unavailable (${why.en}): searched on the query as given`,
        `查询扩展不可用（${why.zh}），已按原查询搜索`,
      ),
    );
    return [];
  }
  const content = answer.content;
  const terms = termsOf(content, query);
  if (terms === undefined) {
    ctx.log.warn({ answer: content.slice(0, 500) }, "query rewrite: unreadable LLM answer; searching on the query");
    notes.push(
      text(
        "query expansion unavailable (the LLM's answer was not the agreed JSON): searched on the query as given",
        "查询扩展不可用（LLM 的回答不是约定的 JSON），已按原查询搜索",
      ),
    );
    return [];
  }
  deps.sessions
    .setJson(key, terms, EXPANSION_TTL_MS)
    .catch((err: unknown) => ctx.log.warn({ err }, "cache write failed"));
  return terms;
}

/** The answer's terms and restated query, trimmed, deduplicated, none the query already is; undefined when unreadable. */
function termsOf(content: string, query: string): string[] | undefined {
  const read = readJsonObject(content);
  const parsed = read.ok ? answerSchema.safeParse(read.value) : undefined;
  if (!parsed?.success) return undefined;
  const raw = [
    ...(parsed.data.terms ?? []),
    ...(parsed.data.keywords ?? []).map((k) =>
      typeof k === "object" && k !== null && "keyword" in k ? (k as { keyword: unknown }).keyword : k,
    ),
  ];
  const typed = normalizeText(query);
  const seen = new Set<string>();
  const out: string[] = [];
  for (const t of raw) {
    if (typeof t !== "string") continue;
    const term = t.trim();
    const norm = normalizeText(term);
    if (term === "" || [...term].length > MAX_TERM_CHARS || norm === typed || seen.has(norm)) continue;
    seen.add(norm);
    out.push(term);
    if (out.length === MAX_TERMS) break;
  }
  const restated = parsed.data.expanded_query?.trim();
  if (restated && [...restated].length <= 4 * MAX_TERM_CHARS && normalizeText(restated) !== typed) out.push(restated);
  return out;
}
