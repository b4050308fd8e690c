import { round3 } from "../../core/scores";
import { STOP_WORDS, tokenizer } from "../../core/text";
import { TimeSlice } from "../../core/time-slice";
import type { HandoffInput } from "../inputs";
import type { SearchResultItem } from "../search";
import { idfOf } from "../search-text";
import type { RecallEvent } from "./events";
import type { ConversationMessage } from "./input";
import { RELEVANT_SCORE, type RecallRun } from "./run";

/** The first search's bar and size: the recall's bar (run.ts) and the spec's default size. */
const FIRST = { min_relevance_score: RELEVANT_SCORE, limit: 5 };
/**
 * The widened search (spec §4.3): a lower bar and every result allowed. The
 * spec's 0.3 is the recall's own bar now (RELEVANT_SCORE); this one was set
 * with it on the development sets. A guess from it must still stand out
 * (CLEAR_LEAD) and hold the searched words (GUESS_WORDS).
 */
const WIDENED_MIN_SCORE = 0.1;
/** Words of the rest of the window added to the widened search: the rarest, who name a subject more than chatter does. */
const WINDOW_WORDS = 8;
/** A search by fewer words than this says which memory is meant only when one result stands out ("按之前的格式" fits every format). */
const CONFIRMING_WORDS = 2;
/**
 * A widened search's best result is taken as a guess — named, with its low
 * score as the confidence and the user asked to confirm — only when it leads
 * every other candidate by this factor: one memory standing out, not one of
 * several equally weak matches.
 */
const CLEAR_LEAD = 1.25;
/**
 * Words of the search (or their translations) a guess's text must hold: a
 * memory standing out below the bar by one shared word ("ES 集群 节点" and the
 * one memory on clusters) is more often a neighbour than the one meant.
 */
const GUESS_WORDS = 2;
/** Keys a handoff names at most, and how far below the best a key may score. */
const MAX_KEYS = 3;
const KEY_MARGIN = 0.15;
/** The spec's question (§4.3) when nothing fits. */
const SPEC_FOLLOW_UP = "您能否提供更多细节，比如大概什么时间或什么主题？";
const ENGLISH_FOLLOW_UP = "Could you give more details, such as roughly when or what it was about?";
/**
 * Characters jieba cuts in one go (about a millisecond): a window of two
 * hundred messages of 20,000 characters is read piece by piece, the event
 * loop running between pieces.
 */
const TAG_PIECE_CHARS = 2000;

/**
 * Words with which people point back at something without naming it
 * ("按照我之前的…来", "上次说的那个", "老样子", "来着"): they say a memory is
 * wanted, not which, so they are left out of the search. Stop words
 * (之前, 上次, 那个…) are left out already.
 */
const POINTING_WORDS = new Set(
  (
    "当时 当初 来着 记得 还记得 记住 记一下 老样子 老规矩 照旧 一样 一致 样子 后来 最新 现在 之后 回头 具体 " +
    "是不是 应该 不是 那套 那边 东西 事情 那件事 remember recall again same thing stuff"
  ).split(" "),
);

/** Words that keep a conversation going (thanks, wait, go on) and name nothing a memory is about. */
const CHATTER_WORDS = new Set(
  (
    "谢谢 感谢 客气 不客气 好的 可以 请说 请讲 明白 收到 没问题 稍等 等等 等一下 回来 对了 哈哈 麻烦 " +
    "thanks thank sure okay ok sec moment wait back welcome problem talk ask asking colleague"
  ).split(" "),
);

/**
 * jieba's tags of the words that never name a subject: pronouns,
 * prepositions, conjunctions, particles, numerals, measure words, modal
 * particles, interjections, onomatopoeia, locality and time words
 * ("上周" says when the user asks, not what about), punctuation.
 */
const FUNCTION_TAGS = /^(?:r[rzg]?|p|cc?|u[jlzgdv]?|m[qg]?|q|y|e|o|f|tg?|w|x)$/;

/**
 * Numbers that name something rather than count it: versions of three parts
 * ("MQTT 3.1.1") and codes of five digits or more ("GB/T 32960"). jieba cuts
 * the first apart and tags the second a numeral, so they are read from the
 * text itself.
 */
const CODE_NUMBERS = /(?<![\p{L}\d.])(?:\d+(?:\.\d+){2,}|\d{5,})(?![\p{L}\d]|\.\d)/gu;

/**
 * The user pointing at a habit or preference of theirs ("按我习惯的来",
 * "老规矩", "时区按我要的", "the way I like my charts"): what is meant is a
 * preference, so when a search finds preferences, they are what it found —
 * the latest of each (latest wins), not the task's other memories that
 * share a word with the message.
 */
const PREFERENCE_CUE =
  /按我(?!们)|照我(?!们)|我的?习惯|老规矩|老样子|照旧|偏好|喜好|我喜欢|\b(?:the way I like|how I like|as usual|my usual|I prefer|my preference)/iu;
const PREFERENCE_TYPE = "user_preference";

/**
 * The deterministic strategy (no LLM). Each iteration takes the words that
 * can name a subject from the last user message (jieba, dictionary words
 * only: its guesses at unknown words are more often wrong cuts than names),
 * searches by them (hybrid, the recall's bar RELEVANT_SCORE), and when
 * nothing clears the bar searches again wider (spec §4.3: a lower bar, every
 * result) with the rarest words of the rest of the window added, for a
 * reference like "老样子" whose subject was said before. A message pointing
 * at the user's habit has the preferences searched alone when the first
 * search finds none. A memory clearing the bar in a search of two words or
 * more is opened and handed off, its score
 * as the confidence (scores are calibrated: a memory scoring s is relevant
 * about s of the time). When none does, it widens the window (the next
 * iteration) while it can. At the end, a widened search's one standing-out
 * candidate is handed off as a guess for the user to confirm; with none, it
 * hands off that nothing was found, naming the closest results in its question.
 */
export async function* deterministicStrategy(run: RecallRun): AsyncGenerator<RecallEvent, HandoffInput> {
  const reference = lastUserMessage(run.messages);
  const slice = new TimeSlice();
  // Each message is read once, however many iterations' windows hold it.
  const read = new Map<ConversationMessage, string[]>();
  const tags = new Map<string, string>();
  const wordsOf = async (m: ConversationMessage): Promise<string[]> => {
    let words = read.get(m);
    if (!words) {
      words = await subjectWords(m.content, slice, tags);
      read.set(m, words);
    }
    return words;
  };
  const own = await wordsOf(reference);
  const wantsPreference = PREFERENCE_CUE.test(reference.content.normalize("NFKC"));
  // A search of the preferences alone says something only when the caller's types hold them and others.
  const types = run.input.memory_types;
  const searchPreferences =
    wantsPreference && (types.length === 0 || (types.length > 1 && types.includes(PREFERENCE_TYPE)));
  // The subject in the other language: a memory written in it holds the translations whole.
  const translated = await run.translations(own);
  let guesses: SearchResultItem[] = [];
  // The latest iteration's one standing-out candidate below the bar: handed off only when nothing better turns up.
  let guess: { hit: SearchResultItem; query: string } | undefined;
  const queries: string[] = [];
  for (;;) {
    yield* run.startIteration();
    const others: string[] = [];
    for (const m of run.windowMessages()) if (m !== reference) others.push(...(await wordsOf(m)));
    const ownSet = new Set(own);
    const around = rarest(
      others.filter((w) => !ownSet.has(w)),
      WINDOW_WORDS,
    );
    const widened = [...own, ...around];
    const searches = [
      // The message alone is searched once: a wider window changes only the widened search.
      ...(run.iteration === 1 ? [{ words: own, wide: false, preferences: false }] : []),
      // Pointed at a habit, and the first search found no preference: the preferences alone, at the widened bar.
      ...(run.iteration === 1 && searchPreferences ? [{ words: own, wide: false, preferences: true }] : []),
      ...(run.iteration === 1 && translated.length > 0 ? [{ words: translated, wide: false, preferences: false }] : []),
      { words: widened, wide: true, preferences: false },
    ].filter((s) => s.words.length > 0);
    for (const { words, wide, preferences } of searches) {
      if (run.searchesLeft() <= 0) break;
      if (preferences && guesses.some((g) => g.memory_type === PREFERENCE_TYPE)) continue;
      const query = words.join(" ");
      const outcome = yield* run.call("search_memories", {
        query,
        search_mode: "hybrid",
        ...(preferences ? { memory_types: [PREFERENCE_TYPE] } : {}),
        min_relevance_score: wide || preferences ? WIDENED_MIN_SCORE : FIRST.min_relevance_score,
        limit: Math.min(wide ? run.input.max_results_per_search : FIRST.limit, run.input.max_results_per_search),
      });
      if (!outcome.ok || outcome.tool !== "search_memories") continue;
      queries.push(query);
      const found = wantsPreference ? preferencesIfAny(outcome.out.results) : outcome.out.results;
      if (words.length >= CONFIRMING_WORDS) {
        const relevant = pickRelevant(found, wide);
        if (relevant.length > 0) return yield* conclude(run, relevant, query);
        const lead = wide || preferences ? clearLead(found) : undefined;
        if (
          lead &&
          (heldWords(lead, [...words, ...translated]) >= GUESS_WORDS || isPreferenceFor(lead, wantsPreference))
        )
          guess = { hit: lead, query };
      } else {
        // One word usually names too little to tell memories apart ("按之前的格式": every format fits); it is
        // a finding when one memory clears the bar and stands out from the rest ("按之前的 Grafana 来").
        const lead = clearLead(found);
        if (lead && lead.relevance_score >= RELEVANT_SCORE) return yield* conclude(run, [lead], query);
        // Several fit the word alike ("心跳": the meeting and the metric): the rest of the window says which.
        const settled = settledByWindow(found, around);
        if (settled) return yield* conclude(run, [settled], query);
      }
      guesses = [...guesses, ...found].sort((a, b) => b.relevance_score - a.relevance_score);
    }
    if (!run.canExpand()) break;
    const requested = run.wider();
    const reason =
      run.ctx.language === "en"
        ? `iteration ${run.iteration} found no relevant memory in the newest ${run.window} messages: earlier messages are needed`
        : `第 ${run.iteration} 轮在最新的 ${run.window} 条消息里没有找到相关记忆，需要查看更早的对话`;
    const outcome = yield* run.call("expand_context_window", {
      reason,
      current_size: run.window,
      requested_size: requested,
    });
    if (!outcome.ok || outcome.tool !== "expand_context_window" || !outcome.expansion.approved) break;
    yield* run.expand(outcome.expansion.new_size, reason);
  }
  return guess ? yield* conclude(run, [guess.hit], guess.query) : yield* notFound(run, queries, guesses);
}

/**
 * The words of a message that can name a subject, in order, each once. A
 * long message is cut in pieces at a space or punctuation, pausing for the
 * event loop when the slice is used up. Words are cut, not tagged in place:
 * without the HMM a word's tag is its dictionary entry's, the same in
 * isolation as in the sentence, so each distinct word is tagged once (in
 * `tags`, shared by the messages of a recall) — a third of the work and far
 * less garbage than tagging every word where it stands.
 */
async function subjectWords(text: string, slice: TimeSlice, tags: Map<string, string>): Promise<string[]> {
  const judged = new Set<string>();
  const words = new Set<string>();
  for (const piece of pieces(text.normalize("NFKC"), TAG_PIECE_CHARS)) {
    const pause = slice.pace();
    if (pause) await pause;
    for (const word of tokenizer().cut(piece, false)) {
      if (judged.has(word)) continue;
      judged.add(word);
      if (FUNCTION_TAGS.test(tagOf(word, tags)) || !/\p{L}/u.test(word) || [...word.trim()].length < 2) continue;
      const w = word.trim();
      const lower = w.toLowerCase();
      if (!STOP_WORDS.has(lower) && !POINTING_WORDS.has(lower) && !CHATTER_WORDS.has(lower)) words.add(w);
    }
  }
  for (const code of text.normalize("NFKC").matchAll(CODE_NUMBERS)) words.add(code[0]);
  return [...words];
}

/** jieba's tag of a word jieba cut; one it would cut again on its own is tagged x (no subject). */
function tagOf(word: string, tags: Map<string, string>): string {
  let tag = tags.get(word);
  if (tag === undefined) {
    const tagged = tokenizer().tag(word, false);
    tag = tagged.length === 1 ? tagged[0]!.tag : "x";
    tags.set(word, tag);
  }
  return tag;
}

/** The text in pieces of at most `size` characters, each ending at a space or punctuation where one is near the end. */
function pieces(text: string, size: number): string[] {
  const out: string[] = [];
  let start = 0;
  while (start < text.length) {
    let end = Math.min(text.length, start + size);
    if (end < text.length) {
      let cut = end;
      for (let j = end - 1; j > start + size / 2; j--) {
        if (BOUNDARY.test(text[j]!)) {
          cut = j + 1;
          break;
        }
      }
      // Never between the two halves of a surrogate pair.
      if (cut === end && /[\ud800-\udbff]/.test(text[end - 1]!)) cut--;
      end = cut;
    }
    out.push(text.slice(start, end));
    start = end;
  }
  return out;
}

const BOUNDARY = /[\s\p{P}]/u;

/** The `n` rarest words (by jieba's inverse document frequency), in their order. */
function rarest(words: string[], n: number): string[] {
  const distinct = unique(words);
  const idf = new Map(distinct.map((w) => [w, idfOf(w.toLowerCase())]));
  const kept = new Set([...distinct].sort((a, b) => idf.get(b)! - idf.get(a)!).slice(0, n));
  return distinct.filter((w) => kept.has(w));
}

/** The last message the user wrote: what the recall explains. */
function lastUserMessage(messages: readonly ConversationMessage[]): ConversationMessage {
  for (let i = messages.length - 1; i >= 0; i--) if (messages[i]!.role === "user") return messages[i]!;
  // The input requires a user message.
  throw new Error("recall: no user message");
}

/**
 * The results the conversation may mean: those clearing the bar, close to
 * the best one, the replaced ones out when what replaces them is there (latest
 * wins), at most three. A widened search's (`wide`) are all named: the words
 * of the rest of the window it adds can lift a memory of the conversation's
 * earlier subject above the one the last message asks about ("BMS 要改 SOC
 * 的信号定义" … "他们老大是谁"), so closeness to the best says little there.
 */
function pickRelevant(found: readonly SearchResultItem[], wide = false): SearchResultItem[] {
  const clearing = found.filter((r) => r.relevance_score >= RELEVANT_SCORE);
  const best = clearing[0]?.relevance_score ?? 0;
  const keys = new Set(clearing.map((r) => r.memory_key));
  return clearing
    .filter((r) => wide || r.relevance_score >= best - KEY_MARGIN)
    .filter((r) => r.superseded_by === "" || !keys.has(r.superseded_by))
    .slice(0, MAX_KEYS);
}

/** The preferences among the results when there are any (the user pointed at one), else the results. */
function preferencesIfAny(found: readonly SearchResultItem[]): readonly SearchResultItem[] {
  const preferences = found.filter((r) => r.memory_type === PREFERENCE_TYPE);
  return preferences.length > 0 ? preferences : found;
}

/**
 * The one candidate of a widened search that stands out (CLEAR_LEAD over the
 * next; a memory replaced by a newer one found beside it is no rival), or
 * undefined.
 */
function clearLead(found: readonly SearchResultItem[]): SearchResultItem | undefined {
  const keys = new Set(found.map((r) => r.memory_key));
  const rivals = found.filter((r) => r.superseded_by === "" || !keys.has(r.superseded_by));
  const [best, next] = rivals;
  if (!best) return undefined;
  return next === undefined || best.relevance_score >= CLEAR_LEAD * next.relevance_score ? best : undefined;
}

/**
 * Of several memories clearing the bar alike, the one whose text (summary,
 * preview, keywords) holds the most words of the rest of the window, when
 * one holds more than every other: "跟 tbox 厂商开的那个会" … "心跳最后咋定的"
 * is the meeting with the T-Box vendor, not the metric that also speaks of
 * heartbeats.
 */
function settledByWindow(found: readonly SearchResultItem[], around: readonly string[]): SearchResultItem | undefined {
  const keys = new Set(found.map((r) => r.memory_key));
  const candidates = found.filter(
    (r) => r.relevance_score >= RELEVANT_SCORE && (r.superseded_by === "" || !keys.has(r.superseded_by)),
  );
  const words = around.map(folded).filter((w) => w.length > 0);
  if (candidates.length < 2 || words.length === 0) return undefined;
  const held = candidates.map((r) => {
    const text = folded([r.summary, r.content_preview, ...r.keywords].join(" "));
    return words.filter((w) => text.includes(w)).length;
  });
  const most = Math.max(...held);
  if (most === 0 || held.filter((h) => h === most).length > 1) return undefined;
  return candidates[held.indexOf(most)];
}

/** True when the user pointed at a preference and `r` is one: the pointing says which kind is meant. */
function isPreferenceFor(r: SearchResultItem, wantsPreference: boolean): boolean {
  return wantsPreference && r.memory_type === PREFERENCE_TYPE;
}

/**
 * How many of `words` the result's text (summary, preview, keywords) holds: a
 * Latin word at the start of one of its words ("prefix" in "prefixed"), any
 * other where it stands.
 */
function heldWords(r: SearchResultItem, words: readonly string[]): number {
  const raw = [r.summary, r.content_preview, ...r.keywords].join(" ");
  const text = raw.normalize("NFKC").toLowerCase();
  const loose = folded(raw);
  let held = 0;
  for (const w of unique(words.map((x) => x.normalize("NFKC").toLowerCase()))) {
    if (/^[\p{Script=Latin}\d]/u.test(w)) {
      if (text.includes(w) && new RegExp(`(?<![\\p{L}\\p{N}])${escapeRegExp(w)}`, "u").test(text)) held++;
    } else if (folded(w).length > 0 && loose.includes(folded(w))) held++;
  }
  return held;
}

function escapeRegExp(s: string): string {
  return s.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
}

/** Text compared loosely: lower case, letters and digits only ("T-Box" holds "tbox"). */
function folded(text: string): string {
  return text
    .normalize("NFKC")
    .toLowerCase()
    .replace(/[^\p{L}\p{N}]+/gu, "");
}

/**
 * Opens the memories found and hands them off; a replaced one is swapped for
 * what replaces it. Below the bar (a guess of a widened or preferences search) the
 * user is asked to confirm.
 */
async function* conclude(
  run: RecallRun,
  relevant: SearchResultItem[],
  query: string,
): AsyncGenerator<RecallEvent, HandoffInput> {
  const keys = unique(relevant.map((r) => (r.superseded_by === "" ? r.memory_key : r.superseded_by)));
  const summaries: [string, string][] = [];
  // One after another: each opening is an event of the stream, in the order of the keys.
  for (const key of keys) {
    const outcome = yield* run.call("get_memory_detail", { memory_key: key });
    if (outcome.ok && outcome.tool === "get_memory_detail") summaries.push([key, outcome.memory.summary]);
  }
  const best = relevant[0]!;
  const sure = best.relevance_score >= RELEVANT_SCORE;
  const en = run.ctx.language === "en";
  const named = summaries.map(([key, summary]) => (en ? `${key}: ${summary}` : `${key}：${summary}`));
  const current = best.superseded_by === "";
  const conclusion: HandoffInput = {
    reason: en
      ? sure
        ? `found ${keys.length} relevant ${keys.length === 1 ? "memory" : "memories"}: the search is complete`
        : "found only one memory that may be relevant: the user needs to confirm it"
      : sure
        ? `已找到 ${keys.length} 条相关记忆，搜索完成`
        : "只找到一条可能相关的记忆，需要用户确认",
    search_summary: en
      ? `${sure ? "the memory the user means" : "the closest memory"}: ${named.join("; ")}`
      : `${sure ? "找到用户提到的记忆" : "最接近的记忆"}：${named.join("；")}`,
    relevant_memory_keys: keys,
    confidence: round3(best.relevance_score),
    needs_more_info: !sure,
    follow_up_question: sure
      ? ""
      : en
        ? `Do you mean “${best.summary || keys[0]}”?`
        : `您指的是「${best.summary || keys[0]}」吗？`,
    iteration_used: run.iteration,
    context_window_used: run.window,
    reasoning: en
      ? `a hybrid search for “${query}”: ${best.memory_key} is the most relevant at ${best.relevance_score}${
          current ? "" : `; it has been superseded by ${best.superseded_by}, and the newer one stands`
        }`
      : `按关键词「${query}」混合搜索，${best.memory_key} 的相关性 ${best.relevance_score} 最高${
          current ? "" : `；它已被 ${best.superseded_by} 取代，以新的为准`
        }`,
  };
  return yield* handOff(run, conclusion);
}

/** Hands off that nothing fits (spec §4.3), naming the closest guesses in the question. */
async function* notFound(
  run: RecallRun,
  queries: string[],
  guesses: SearchResultItem[],
): AsyncGenerator<RecallEvent, HandoffInput> {
  const closest = unique(guesses.map((g) => g.memory_key)).slice(0, 2);
  const en = run.ctx.language === "en";
  const named = closest.map((k) => {
    const g = guesses.find((x) => x.memory_key === k)!;
    return en ? `“${g.summary || k}”` : `「${g.summary || k}」`;
  });
  const followUp = en ? ENGLISH_FOLLOW_UP : SPEC_FOLLOW_UP;
  const conclusion: HandoffInput = {
    reason: en
      ? run.canExpand()
        ? "no relevant memory found"
        : "no relevant memory found, and the last iteration is reached or the whole conversation was read"
      : run.canExpand()
        ? "未找到相关记忆"
        : "未找到相关记忆，已达到最大迭代次数或已读完全部对话",
    search_summary: en
      ? `no memory the user mentions was found (searched for: ${queries.length > 0 ? queries.join("; ") : "no searchable keywords"})`
      : `未找到用户提到的历史记忆（搜索了：${queries.length > 0 ? queries.join("；") : "没有可搜索的关键词"}）`,
    relevant_memory_keys: [],
    confidence: 0,
    needs_more_info: true,
    follow_up_question:
      named.length > 0
        ? en
          ? `Do you mean ${named.join(" or ")}? If not: ${followUp}`
          : `您指的是${named.join("或")}吗？如果不是，${followUp}`
        : followUp,
    iteration_used: run.iteration,
    context_window_used: run.window,
    reasoning: "",
  };
  return yield* handOff(run, conclusion);
}

/** The handoff tool call that ends every recall (the run fills in the iteration and window). */
async function* handOff(run: RecallRun, conclusion: HandoffInput): AsyncGenerator<RecallEvent, HandoffInput> {
  const { iteration_used: _i, context_window_used: _w, ...args } = conclusion;
  yield* run.call("handoff", { ...args });
  return conclusion;
}

function unique<T>(xs: readonly T[]): T[] {
  return [...new Set(xs)];
}
