import { z } from "zod";
import type { CallContext } from "../core/call-context";
import { normalizeText, STOP_WORDS, tokenizer } from "../core/text";
import { type Text, text } from "../errors/text";
import { ToolError } from "../errors/tool-error";
import type { LlmClient } from "../upstream/llm-client";
import { readJsonObject } from "../upstream/llm-json";
import { idfOf } from "./search-text";

export const KEYWORD_TYPES = ["entity", "action", "concept", "time"] as const;
export type KeywordType = (typeof KEYWORD_TYPES)[number];

export interface ExtractedKeyword {
  keyword: string;
  /** Importance, 0..1, the first the largest. */
  weight: number;
  type: KeywordType;
}

export interface Extraction {
  keywords: ExtractedKeyword[];
  /** The query restated for search ("" when the method has none). */
  expanded_query: string;
  /** "llm", or "fallback" for the local extraction (no LLM configured, or it failed). */
  method: "llm" | "fallback";
  /**
   * What the answer says about its method, in the caller's language: with the fallback, why the extraction
   * is local (spec §2.3's fallback); "" for the LLM's.
   */
  message: string;
}

const NO_LLM = text(
  "no LLM configured (LLM_BASE_URL): extracted locally (jieba TF-IDF + time expressions)",
  "未配置 LLM（LLM_BASE_URL），使用本地提取（jieba TF-IDF + 时间表达式）",
);

/** Time expressions, kept whole and typed "time" (jieba would cut 最近三天 into pieces). */
const TIME_PATTERN = new RegExp(
  [
    "(?:最近|近|过去|前)(?:[0-9一二两三四五六七八九十半]+)(?:个)?(?:天|日|周|星期|礼拜|月|季度|年)",
    "(?:今|昨|前|明)天|今日|昨日|(?:上|本|这|下)(?:个)?(?:周|星期|礼拜|月|季度)|(?:今|去|前|明)年|上半年|下半年|年初|年底|月初|月底",
    "\\d{4}年(?:\\d{1,2}月(?:\\d{1,2}[日号])?)?|\\d{1,2}月\\d{1,2}[日号]",
    "\\b(?:yesterday|today|tonight|tomorrow)\\b|\\b(?:last|this|next|past)\\s+(?:week|month|quarter|year|few\\s+days|\\d+\\s+(?:days|weeks|months|years))\\b",
    "\\b\\d+\\s+(?:days|weeks|months|years)\\s+ago\\b|\\b(?:a\\s+)?(?:couple\\s+of|few)\\s+(?:days|weeks|months)\\s+ago\\b",
  ].join("|"),
  "giu",
);

/** jieba part-of-speech tags to the spec's types (anything else is a concept). */
function typeOfTag(tag: string): KeywordType {
  if (tag === "t" || tag === "tg") return "time";
  if (tag === "v" || tag === "vd" || tag === "vn" || tag === "vg") return "action";
  if (tag.startsWith("nr") || tag === "ns" || tag === "nt" || tag === "nz" || tag === "eng" || tag === "nrt")
    return "entity";
  return "concept";
}

/**
 * The deterministic extraction: jieba's words weighed by term frequency times
 * jieba's inverse document frequency (stop words and bare numbers left out),
 * typed by jieba's part-of-speech tags, plus time expressions found whole.
 * Weights are scaled so the first is 1.
 */
export function extractLocally(query: string, context: string, max: number): ExtractedKeyword[] {
  // NFKC but not lower-cased: "PostgreSQL" is shown as written, and compared in lower case.
  const text = query.normalize("NFKC").replace(/\s+/g, " ").trim();
  const times = [...new Set([...text.matchAll(TIME_PATTERN)].map((m) => m[0].replace(/\s+/g, " ")))];
  const rest = times.reduce((t, expr) => t.split(expr).join(" "), text);
  const scores = new Map<string, { word: string; score: number; type: KeywordType; first: number }>();
  tokenizer()
    .tag(rest, true)
    .forEach(({ word, tag }, i) => {
      const w = word.trim();
      const key = w.toLowerCase();
      // Single characters and bare numbers name nothing one would search by.
      if (!/\p{L}/u.test(w) || STOP_WORDS.has(key) || [...w].length < 2) return;
      const entry = scores.get(key) ?? { word: w, score: 0, type: typeOfTag(tag), first: i };
      entry.score += idfOf(key);
      scores.set(key, entry);
    });
  // Context helps weigh the query's words but adds none of its own.
  if (context.trim() !== "") {
    const contextWords = new Set(tokenizer().cut(normalizeText(context), true));
    for (const [w, entry] of scores) if (contextWords.has(w)) entry.score *= 1.2;
  }
  const ranked = [...scores.entries()].sort((a, b) => b[1].score - a[1].score || a[1].first - b[1].first);
  const top = ranked[0]?.[1].score ?? 1;
  const words: ExtractedKeyword[] = ranked.map(([, e]) => ({
    keyword: e.word,
    weight: round(e.score / top),
    type: e.type,
  }));
  // A time expression narrows a search more than any one word: it keeps a fixed, high weight.
  const timeWords: ExtractedKeyword[] = times.map((keyword) => ({ keyword, weight: 0.8, type: "time" }));
  return [...words.slice(0, 1), ...timeWords, ...words.slice(1)].slice(0, max).sort((a, b) => b.weight - a.weight);
}

const round = (x: number) => Math.round(x * 100) / 100;

const llmAnswer = z.object({
  keywords: z
    .array(
      z.object({
        keyword: z.string().trim().min(1),
        weight: z.coerce.number().catch(0.5),
        type: z.string().catch("concept"),
      }),
    )
    .default([]),
  expanded_query: z.string().nullish(),
});

/** The spec's prompt (memrecall-tools §2.3), word for word. */
export function extractionPrompt(query: string, context: string, max: number): string {
  return `从以下查询中提取搜索关键词。

用户查询: ${query}
${context ? `上下文: ${context}` : ""}

请提取最多 ${max} 个关键词，按重要性排序。
关键词类型包括:
- entity: 人名、地名、系统名、文件名等实体
- action: 操作、动作、命令等行为
- concept: 概念、主题、技术术语
- time: 时间相关词汇（如"上周"、"昨天"等）

返回 JSON 格式:
{
    "keywords": [
        {"keyword": "词1", "weight": 0.9, "type": "entity"},
        {"keyword": "词2", "weight": 0.7, "type": "action"}
    ],
    "expanded_query": "扩展后的查询描述"
}`;
}

/**
 * extract_search_keywords: the LLM with the spec's prompt when one is
 * configured; weights clamped to 0..1, unknown types read as concept,
 * duplicates dropped, at most `max`. Without an LLM, or when it fails or
 * answers something unreadable, the local extraction, labelled "fallback"
 * with the reason.
 */
export async function extractKeywords(
  llm: LlmClient | undefined,
  ctx: CallContext,
  query: string,
  context: string,
  max: number,
): Promise<Extraction> {
  const fallback = (why: Text): Extraction => ({
    keywords: extractLocally(query, context, max),
    expanded_query: "",
    method: "fallback",
    message: why[ctx.language],
  });
  if (!llm) return fallback(NO_LLM);
  let content: string;
  try {
    content = (
      await llm.complete(ctx, [{ role: "user", content: extractionPrompt(query, context, max) }], { json: true })
    ).content;
  } catch (err) {
    ctx.signal.throwIfAborted();
    ctx.log.warn({ err }, "keyword extraction: the LLM failed; using the local extraction");
    // A ToolError's message is written for callers; anything else may carry what only the log may see.
    const why = err instanceof ToolError ? err.text : text("internal error", "内部错误");
    return fallback(
      text(`the LLM call failed (${why.en}): extracted locally`, `LLM 调用失败（${why.zh}），已使用本地提取`),
    );
  }
  const read = readJsonObject(content);
  const parsed = read.ok ? llmAnswer.safeParse(read.value) : undefined;
  if (!parsed?.success) {
    ctx.log.warn(
      { answer: content.slice(0, 500) },
      "keyword extraction: unreadable LLM answer; using the local extraction",
    );
    return fallback(
      text("the LLM's answer was not the agreed JSON: extracted locally", "LLM 的回答不是约定的 JSON，已使用本地提取"),
    );
  }
  const seen = new Set<string>();
  const keywords: ExtractedKeyword[] = [];
  for (const k of parsed.data.keywords) {
    const key = normalizeText(k.keyword);
    if (seen.has(key)) continue;
    seen.add(key);
    keywords.push({
      keyword: k.keyword,
      weight: round(Math.min(1, Math.max(0, Number.isFinite(k.weight) ? k.weight : 0.5))),
      type: (KEYWORD_TYPES as readonly string[]).includes(k.type) ? (k.type as KeywordType) : "concept",
    });
    if (keywords.length === max) break;
  }
  if (keywords.length === 0)
    return fallback(text("the LLM gave no keywords: extracted locally", "LLM 没有给出关键词，已使用本地提取"));
  return { keywords, expanded_query: parsed.data.expanded_query?.trim() ?? "", method: "llm", message: "" };
}
