import type { CallContext } from "../../core/call-context";
import { comparable } from "../../core/text";
import { llmNotConfigured } from "../../errors/common";
import { joinText, type Text, text } from "../../errors/text";
import type { MemoryRecord, MemoryWrite } from "../../store/memories/memory-store";
import type { MemoriesDeps } from "../memories-deps";
import { ownerOf } from "../owner";
import { searchMemories } from "../search";
import { commitWrites, memoryWrite } from "../write";
import { type Candidate, sameText, subjectOverlap } from "./candidates";
import { type Decision, decideByRules, keyOf, type Operation, SAME_SUBJECT } from "./decide";
import { MEMORY_KINDS, type RememberInput } from "./input";
import { decideByLlm, extractByLlm, MAX_CANDIDATES, type Masked } from "./llm";
import { extractByRules } from "./rules";
import { hasSecret, redactForSensitive, redactSecrets } from "./secrets";

/** The most similar memories a candidate is compared with. */
const SIMILAR = 5;
/** Similar memories below this relevance are not compared with. */
const SIMILAR_FLOOR = 0.1;
/** The longest the LLM may take over one conversation, both requests and their repairs. */
export const REMEMBER_LLM_BUDGET_MS = 60_000;

/** One operation as answered. */
export interface RememberOperation {
  operation: Operation;
  memory_key: string;
  memory_type: string;
  summary: string;
  source_messages: number[];
  reason: string;
  supersedes: string;
  sensitive: boolean;
  /** ISO 8601. */
  stated_at: string;
}

export interface RememberResult {
  operations: RememberOperation[];
  mode: "llm" | "rules";
  applied: boolean;
  llm_calls: number;
  message: string;
  counts: { added: number; updated: number; superseded: number; unchanged: number };
}

/**
 * RememberConversation: what the conversation says worth keeping (rules or
 * the LLM), each compared with the user's most similar memories and decided
 * (ADD, UPDATE, SUPERSEDE, NOOP), then written in one transaction unless
 * `dry_run`. A memory holding a secret is sensitive, its summary and keywords
 * without it; the log holds counts and keys only.
 */
export async function rememberConversation(
  deps: MemoriesDeps,
  ctx: CallContext,
  input: RememberInput,
): Promise<RememberResult> {
  const owner = ownerOf(ctx.caller);
  const mode = modeOf(input.mode, deps);
  const kinds = input.memory_types.length > 0 ? input.memory_types : [...MEMORY_KINDS];
  const masked: Masked = { vault: new Map() };
  let llmCalls = 0;
  // The LLM's requests share one budget, and the caller's deadline.
  const llmCtx = { ...ctx, signal: AbortSignal.any([ctx.signal, AbortSignal.timeout(REMEMBER_LLM_BUDGET_MS)]) };
  let extracted: Candidate[];
  const notes: Text[] = [];
  if (mode === "llm") {
    const r = await extractByLlm(deps.llm!, llmCtx, input.messages, kinds, masked);
    extracted = r.candidates;
    llmCalls += r.calls;
    const read = input.messages.length - r.left;
    if (r.left > 0)
      notes.push(
        text(
          `the conversation is too long: the LLM read only its newest ${read} messages`,
          `对话过长，LLM 只读了最新的 ${read} 条消息`,
        ),
      );
  } else {
    extracted = extractByRules(input.messages).filter((c) => kinds.includes(c.memory_type));
  }
  const { kept: candidates, total } = latestOfConversation(extracted);
  if (total > MAX_CANDIDATES)
    notes.push(
      text(
        `the conversation holds ${total} things worth keeping; only the first ${MAX_CANDIDATES} were handled: send it in parts`,
        `对话中可保存的内容有 ${total} 条，只处理了前 ${MAX_CANDIDATES} 条：请分段发送`,
      ),
    );
  const similar: MemoryRecord[][] = [];
  for (const c of candidates) similar.push(await similarTo(deps, ctx, owner, c));
  // Rules decide each; the LLM is asked only where a similar memory exists and none says the same:
  // the same statement again is known whoever decides, so a second run changes nothing.
  const decisions: ({ decision: Decision; content?: string } | undefined)[] = candidates.map((c, i) => {
    const own = keyOf(c);
    const same = similar[i]!.find((r) => r.memory_key === own || sameText(r.content, c.content));
    if (same) return { decision: decideByRules(c, [same]) };
    if (mode === "rules") return { decision: decideByRules(c, similar[i]!) };
    return similar[i]!.length === 0 ? { decision: add(own) } : undefined;
  });
  const pending = candidates.flatMap((c, i) =>
    decisions[i] === undefined ? [{ candidate: c, similar: similar[i]!, i }] : [],
  );
  if (pending.length > 0) {
    const r = await decideByLlm(deps.llm!, llmCtx, pending, keyOf, masked);
    llmCalls += r.calls;
    r.decisions.forEach((d, n) => {
      decisions[pending[n]!.i] = d;
    });
  }
  const now = new Date().toISOString();
  // A secret the service masked is a secret however the LLM worded the text around it.
  const secrets = [...masked.vault.values()];
  const plans = candidates.map((c, i): Plan => {
    const planned = planOf(c, decisions[i]!, similar[i]!);
    const content = planned.content ?? c.content;
    const sensitive = hasSecret(content) || secrets.some((x) => content.includes(x));
    return sensitive
      ? { ...withoutSecrets(planned, secrets), c: withoutSecrets(c, secrets), sensitive }
      : { ...planned, c, sensitive };
  });
  const operations = plans.map((p) => operationOf(p, now));
  const writes = await writesOf(deps, ctx, mode, plans, similar);
  const applied = !input.dry_run && writes.length > 0;
  if (applied) await commitWrites(deps, ctx, owner, writes);
  const counts = countOf(operations);
  ctx.log.info(
    { mode, dry_run: input.dry_run, ...counts, llm_calls: llmCalls, keys: operations.map((o) => o.memory_key) },
    "conversation remembered",
  );
  return {
    operations,
    mode,
    applied,
    llm_calls: llmCalls,
    message: joinText([messageOf(operations, input.dry_run, mode), ...notes], text("; ", "；"))[ctx.language],
    counts,
  };
}

/**
 * What a caller without the sensitive scope sees of a sensitive memory — its
 * summary, the operation's reason — with no secret: neither one the service
 * masked nor a key-like run the scanner did not recognise beside one it did
 * (an AWS secret key next to its access key id).
 */
function withoutSecrets<T extends { summary?: string; why?: string; decision?: Decision }>(
  x: T,
  masked: readonly string[],
): T {
  const clean = (text: string) => redactForSensitive(masked.reduce((t, s) => t.replaceAll(s, "[已隐去]"), text));
  return {
    ...x,
    ...(x.summary !== undefined ? { summary: clean(x.summary) } : {}),
    ...(x.why !== undefined ? { why: clean(x.why) } : {}),
    ...(x.decision ? { decision: { ...x.decision, reason: clean(x.decision.reason) } } : {}),
  };
}

function modeOf(asked: RememberInput["mode"], deps: MemoriesDeps): "llm" | "rules" {
  if (asked === "rules" || (asked === "auto" && !deps.llm)) return "rules";
  if (deps.llm) return "llm";
  throw llmNotConfigured({
    needs: text('mode "llm" needs an LLM', 'mode "llm" 需要 LLM'),
    instead: text(
      'Call again with mode "auto" or "rules" (explicit statements only).',
      '用 mode "auto" 或 "rules"（只保存明确的陈述）重新调用。',
    ),
    validValues: ["auto", "rules"],
  });
}

function add(key: string): Decision {
  return { operation: "ADD", memory_key: key, supersedes: "", reason: "没有相似的记忆" };
}

/**
 * The candidates with repeats merged (the same text said twice is one memory
 * from both messages) and, of two on one subject where the later says it
 * changes something, the later only: within a conversation, latest wins too.
 */
function latestOfConversation(candidates: readonly Candidate[]): { kept: Candidate[]; total: number } {
  const kept: Candidate[] = [];
  // Each text compared once (a Map of its comparable form): a message of a thousand statements stays linear.
  const seen = new Map<string, Candidate | undefined>();
  let total = 0;
  for (const c of candidates) {
    const text = comparable(c.content);
    if (seen.has(text)) {
      const o = seen.get(text);
      if (o) o.sources = [...new Set([...o.sources, ...c.sources])].sort((a, b) => a - b);
      continue;
    }
    total++;
    // Past the most a conversation keeps, a candidate is only counted (the answer says how many there were).
    if (kept.length >= MAX_CANDIDATES) {
      seen.set(text, undefined);
      continue;
    }
    const own = { ...c, sources: [...c.sources] };
    seen.set(text, own);
    if (c.revises) {
      const replaced = kept.findIndex(
        (o) => o.memory_type === c.memory_type && subjectOverlap(o.content, c.content) >= SAME_SUBJECT,
      );
      if (replaced >= 0) kept.splice(replaced, 1);
    }
    kept.push(own);
  }
  return { kept, total };
}

/**
 * The user's memories most like the candidate: a hybrid search of its text
 * (secrets out), without the LLM's query rewrite (the candidate is already
 * the user's words), read whole from the store; and those sharing its words
 * (a keyword search). A changed preference and the one it changes share the
 * subject's words but few others, so hybrid relevance can put the pair below
 * the floor (a model's cosines are its own; the local embedder's evidence
 * counts little beside the words): the rules, which decide by the words two
 * statements share, and the LLM, which judges only what it is shown, would
 * not see the pair (with the LLM, measured: 1 of 6 changed preferences
 * superseded right without the keyword search, 6 of 6 with it).
 */
async function similarTo(deps: MemoriesDeps, ctx: CallContext, owner: string, c: Candidate): Promise<MemoryRecord[]> {
  const query = [...redactSecrets(`${c.summary}\n${c.content}`)].slice(0, 2000).join("").trim();
  const search = async (search_mode: "hybrid" | "keyword", min_relevance_score: number) =>
    (
      await searchMemories(
        { ...deps, llm: undefined },
        ctx,
        {
          query,
          search_mode,
          keywords: [],
          memory_types: [],
          limit: SIMILAR,
          min_relevance_score,
          session_id: "",
        },
        // Without the rewrite its answer is not the agent's search's: kept out of the cache both ways.
        { cache: false },
      )
    ).results;
  const found = [...(await search("hybrid", SIMILAR_FLOOR)), ...(await search("keyword", 0))];
  const keys = [...new Set(found.map((r) => r.memory_key))];
  const own = keyOf(c);
  const records = await deps.store.getMany(owner, [...new Set([own, ...keys])]);
  const byKey = new Map(records.map((r) => [r.memory_key, r]));
  return [own, ...keys].flatMap((k, i) => {
    const r = byKey.get(k);
    return r && (i === 0 || k !== own) ? [r] : [];
  });
}

/** What is written for a candidate: the decision, the content (an UPDATE's merged one), and whether it is sensitive. */
interface Plan {
  c: Candidate;
  decision: Decision;
  content?: string;
  sensitive: boolean;
}

/**
 * The decision as carried out. A sensitive memory is never rewritten: its
 * secret would be lost to content written without it (the LLM sees such a
 * memory by its summary only), so an UPDATE of one supersedes it instead.
 */
function planOf(
  c: Candidate,
  d: { decision: Decision; content?: string },
  similar: readonly MemoryRecord[],
): Omit<Plan, "c" | "sensitive"> {
  const target = similar.find((r) => r.memory_key === d.decision.memory_key);
  if (d.decision.operation !== "UPDATE" || !target?.sensitive) return d;
  return {
    decision: {
      operation: "SUPERSEDE",
      memory_key: keyOf(c),
      supersedes: target.memory_key,
      reason: `${d.decision.reason}（敏感记忆不改写：新记忆取代它）`,
    },
  };
}

function operationOf({ c, decision: d, sensitive }: Plan, now: string): RememberOperation {
  return {
    operation: d.operation,
    memory_key: d.memory_key,
    memory_type: c.memory_type,
    summary: c.summary,
    source_messages: c.sources,
    reason: d.operation === "ADD" ? `${c.why}；${d.reason}` : d.reason,
    supersedes: d.supersedes,
    sensitive,
    stated_at: c.stated_at ? new Date(c.stated_at).toISOString() : now,
  };
}

/** The memory writes the decisions make (none for NOOP), in the conversation's order. */
async function writesOf(
  deps: MemoriesDeps,
  ctx: CallContext,
  mode: "llm" | "rules",
  plans: readonly Plan[],
  similar: readonly MemoryRecord[][],
): Promise<MemoryWrite[]> {
  const writes: MemoryWrite[] = [];
  for (const [i, { c, decision: d, content: merged, sensitive }] of plans.entries()) {
    if (d.operation === "NOOP") continue;
    const content = merged ?? c.content;
    const old = d.operation === "UPDATE" ? similar[i]!.find((r) => r.memory_key === d.memory_key) : undefined;
    writes.push(
      await memoryWrite(deps, ctx, {
        memory_key: d.memory_key,
        memory_type: c.memory_type,
        summary: c.summary,
        content,
        keywords: [],
        metadata: { source: "remember_conversation", mode, source_messages: c.sources },
        // An update keeps what the memory replaced.
        supersedes: old ? old.supersedes : d.supersedes,
        sensitive,
        ...(c.stated_at ? { stated_at: c.stated_at } : {}),
      }),
    );
  }
  return writes;
}

function countOf(ops: readonly RememberOperation[]) {
  const n = (op: Operation) => ops.filter((o) => o.operation === op).length;
  return { added: n("ADD"), updated: n("UPDATE"), superseded: n("SUPERSEDE"), unchanged: n("NOOP") };
}

function messageOf(ops: readonly RememberOperation[], dryRun: boolean, mode: "llm" | "rules"): Text {
  if (ops.length === 0)
    return mode === "rules"
      ? text(
          "the conversation says nothing explicitly to remember (rules mode keeps explicit statements only: remember…, from now on…, I like / don't…, commands, key=value settings)",
          "对话中没有明确要记住的内容（规则模式只保存明确的陈述：记住…、以后…、我喜欢/不要…、命令、key=value 配置）",
        )
      : text("the conversation holds nothing worth keeping long-term", "对话中没有值得长期记住的内容");
  const c = countOf(ops);
  const what = text(
    `added ${c.added}, updated ${c.updated}, superseded ${c.superseded}, already known ${c.unchanged}`,
    `新增 ${c.added}，更新 ${c.updated}，取代 ${c.superseded}，已知 ${c.unchanged}`,
  );
  return dryRun ? text(`dry run, nothing written: ${what.en}`, `试运行，未写入：${what.zh}`) : what;
}
