import { Jieba } from "@node-rs/jieba";
import { dict } from "@node-rs/jieba/dict.js";

/** One jieba instance per process: loading the dictionary takes ~100 ms. */
let jieba: Jieba | undefined;
export function tokenizer(): Jieba {
  jieba ??= Jieba.withDict(dict);
  return jieba;
}

/**
 * The form text is compared in: NFKC (full-width letters, digits and
 * punctuation become their half-width forms, so "ＩｇＡ（２型）" reads
 * "IgA(2型)"), lower case, runs of white space collapsed.
 */
export function normalizeText(text: string): string {
  return text.normalize("NFKC").toLowerCase().replace(/\s+/g, " ").trim();
}

/** Lower-cased NFKC without punctuation, symbols or spaces: "上、下气道梗阻" → "上下气道梗阻". */
export function comparable(text: string): string {
  return normalizeText(text).replace(/[\p{P}\p{S}\s]+/gu, "");
}

/**
 * Words that carry no topic in either language, for every comparison of a
 * query with a text (schema ranking, instance search, memory search): they
 * are not looked up and weigh least. Question words (哪些, 如何), fillers
 * (一下, 请), references to earlier talk (之前, 上次) and English function words.
 */
export const STOP_WORDS: ReadonlySet<string> = new Set(
  (
    "的 了 吗 呢 吧 啊 就 都 也 还 之 其 中 等 个 几 谁 哪 " +
    "是 有 在 对 为 被 把 给 让 用 从 到 和 与 及 或 并 以及 还有 " +
    "我 你 他 她 它 我们 你们 他们 它们 这 那 这个 那个 这些 那些 一个 " +
    "什么 怎么 怎样 如何 多少 哪些 哪个 有哪些 没有 时候 可以 能 会 要 需要 " +
    "请 帮 帮我 一下 查询 查 列出 给出 告诉 所有 全部 情况 相关 信息 按照 关于 " +
    "之前 以前 上次 那次 说 说过 提到 提过 " +
    "a an the of to in on at for and or but is are was were be been being this that these those it its my your our their i you we they " +
    "me us what which who how when where why do does did done have has had with from by as about into than then so not no yes " +
    "list show please previous previously before last earlier mentioned said"
  ).split(" "),
);

/** The distinct meaningful tokens of a text (search segmentation, stop words out). */
export function contentTokens(text: string): string[] {
  return [...new Set(tokenize(text))].filter((t) => !STOP_WORDS.has(t));
}

/** Word tokens for full-text matching: jieba's search segmentation of the normalised text, punctuation dropped. */
export function tokenize(text: string): readonly string[] {
  return segment("search", text, (normalized) => tokenizer().cutForSearch(normalized, true));
}

/** The words of a text in jieba's precise mode (no overlapping sub-words), punctuation dropped. */
export function words(text: string): readonly string[] {
  return segment("precise", text, (normalized) => tokenizer().cut(normalized, false));
}

/**
 * Segmentations by mode and text, shared (frozen): the same questions,
 * keywords and names are segmented again and again, and each cut is a call
 * into jieba costing tens of microseconds even for a word of four characters.
 * Past SEGMENTS_CACHED texts the cache starts over.
 */
const segments = new Map<string, readonly string[]>();
const SEGMENTS_CACHED = 20_000;

function segment(mode: "search" | "precise", text: string, cut: (normalized: string) => string[]): readonly string[] {
  const key = `${mode}\u0000${text}`;
  let tokens = segments.get(key);
  if (tokens === undefined) {
    const normalized = normalizeText(text);
    tokens = Object.freeze(normalized === "" ? [] : cut(normalized).filter((t) => /[\p{L}\p{N}]/u.test(t)));
    if (segments.size >= SEGMENTS_CACHED) segments.clear();
    segments.set(key, tokens);
  }
  return tokens;
}

/** The distinct character bigrams of a normalised string (its single character when it has one). */
export function bigrams(normalized: string): string[] {
  const chars = [...normalized];
  if (chars.length === 1) return chars;
  const out = new Set<string>();
  for (let i = 0; i + 1 < chars.length; i++) out.add(chars[i]! + chars[i + 1]!);
  return [...out];
}

/** The text of a property value for matching, or undefined for values that are not text-like. */
export function textOf(value: unknown): string | undefined {
  if (typeof value === "string") return value;
  if (typeof value === "number" || typeof value === "boolean") return String(value);
  return undefined;
}
