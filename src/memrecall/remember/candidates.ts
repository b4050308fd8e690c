import { comparable, normalizeText, STOP_WORDS } from "../../core/text";
import { idfOf, searchTokens } from "../search-text";
import type { MemoryKind } from "./input";
import { redactSecrets } from "./secrets";

/** Something worth keeping that a conversation says, before it is compared with the user's memories. */
export interface Candidate {
  memory_type: MemoryKind;
  /** What the memory will hold, secrets included (a memory holding one is stored as sensitive). */
  content: string;
  /** One line saying what it is, without secrets. */
  summary: string;
  /** Indexes of the messages it came from. */
  sources: number[];
  /** RFC 3339: when its latest source message was sent; undefined when the messages carry no time. */
  stated_at: string | undefined;
  /** It says it changes something said before ("以后", "改用", "from now on"). */
  revises: boolean;
  /** Why it was kept, for the operation's reason. */
  why: string;
}

/** The longest summary, in characters. */
const SUMMARY_CHARS = 120;

/** A one-line summary of `text`: its first non-empty line, secrets replaced, cut at SUMMARY_CHARS. */
export function summaryOf(text: string, prefix = ""): string {
  const line =
    redactSecrets(text)
      .split("\n")
      .map((l) => l.trim())
      .find((l) => l !== "" && !l.startsWith("```")) ?? "";
  const chars = [...`${prefix}${line}`];
  return chars.length > SUMMARY_CHARS ? `${chars.slice(0, SUMMARY_CHARS - 1).join("")}…` : chars.join("");
}

/**
 * Words that say how a statement is made, not what it is about: cues of
 * preference, change and remembering. Two statements sharing only these are
 * not on the same subject.
 */
const CUE_WORDS = new Set(
  (
    "以后 今后 往后 从现在起 现在起 从今天起 改用 改成 改为 换成 换用 改 喜欢 偏好 习惯 希望 想要 不要 别 不用 使用 用户 " +
    "记住 记得 记一下 记下 一律 总是 一直 都 再 请 统一 默认 " +
    "prefer prefers preferred like likes use uses using always never from now on instead please remember note " +
    "going forward default want wants don't do not rather"
  ).split(" "),
);

/** What a statement is about: its content words (stop words and cue words out), by weight. */
export function subjectWords(text: string): Map<string, number> {
  const out = new Map<string, number>();
  for (const t of searchTokens(redactSecrets(text))) {
    if (STOP_WORDS.has(t) || CUE_WORDS.has(t) || /^\d+$/.test(t)) continue;
    out.set(t, idfOf(t));
  }
  return out;
}

/**
 * How much two statements are about the same thing, 0..1: the share of the
 * lighter one's word weight both hold, or, for Chinese, the share of its
 * content characters both hold (折线图 and 柱状图 are both 图: two chart
 * preferences share a subject even when jieba cuts them into different words).
 */
export function subjectOverlap(a: string, b: string): number {
  const wa = subjectWords(a);
  const wb = subjectWords(b);
  const weight = (m: Map<string, number>) => [...m.values()].reduce((s, w) => s + w, 0);
  const smaller = Math.min(weight(wa), weight(wb));
  let shared = 0;
  for (const [t, w] of wa) if (wb.has(t)) shared += w;
  const byWords = smaller === 0 ? 0 : shared / smaller;
  const ca = hanChars(wa);
  const cb = hanChars(wb);
  const both = [...ca].filter((c) => cb.has(c)).length;
  const byChars = both >= 2 ? both / Math.min(ca.size, cb.size) : 0;
  return Math.max(byWords, byChars);
}

function hanChars(words: Map<string, number>): Set<string> {
  const out = new Set<string>();
  for (const w of words.keys()) for (const c of w) if (/\p{Script=Han}/u.test(c)) out.add(c);
  return out;
}

/** The text two memories are compared by: normalised, punctuation and spaces out. */
export function sameText(a: string, b: string): boolean {
  return comparable(a) === comparable(b);
}

/** True when every content word of `part` is in `whole`: `part` says nothing `whole` does not. */
export function saysNothingNew(part: string, whole: string): boolean {
  const held = new Set(searchTokens(normalizeText(whole)));
  const words = [...subjectWords(part).keys()];
  return words.length > 0 && words.every((w) => held.has(w));
}

/** True when `next` holds at least `share` of the subject weight of `old`: it restates it, adding to it. */
export function holdsMostOf(next: string, old: string, share: number): boolean {
  const words = subjectWords(old);
  const held = new Set(searchTokens(normalizeText(next)));
  let total = 0;
  let kept = 0;
  for (const [w, weight] of words) {
    total += weight;
    if (held.has(w)) kept += weight;
  }
  return total > 0 && kept / total >= share;
}

/** Names (Latin-script words such as product names: YAML, Python, Neovim) in a statement. */
function namesOf(text: string): Set<string> {
  return new Set([...subjectWords(text).keys()].filter((w) => /^[a-z][a-z0-9+#.-]{1,}$/.test(w)));
}

/** Both statements name things, and none of the same: they are about different things. */
export function namesDiffer(a: string, b: string): boolean {
  const na = namesOf(a);
  const nb = namesOf(b);
  return na.size > 0 && nb.size > 0 && ![...na].some((n) => nb.has(n));
}
