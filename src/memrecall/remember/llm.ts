import { z } from "zod";
import type { CallContext } from "../../core/call-context";
import { type Text, text } from "../../errors/text";
import { ToolError } from "../../errors/tool-error";
import type { MemoryRecord } from "../../store/memories/memory-store";
import type { LlmClient } from "../../upstream/llm-client";
import { askJson, type Reading, readJsonObject } from "../../upstream/llm-json";
import type { ConversationMessage } from "../recall/input";
import { type Candidate, summaryOf } from "./candidates";
import type { Decision } from "./decide";
import { MEMORY_KINDS, type MemoryKind } from "./input";
import { labelPlaceholders, maskSecrets, unmaskSecrets } from "./secrets";

/** Memories one conversation may yield: more is a transcript, not memories. */
export const MAX_CANDIDATES = 20;
/** Characters of an existing memory shown to the LLM. */
const SHOWN_CHARS = 600;
/** Characters of conversation one extraction prompt holds at most: the newest messages that fit. */
export const PROMPT_CONVERSATION_CHARS = 48_000;
const REPAIR = (problem: string) => `这个回答无法使用：${problem}。请只返回符合要求的 JSON 对象。`;

/** What the LLM sees and writes: secrets replaced by placeholders, which come back as the secrets only in contents. */
export interface Masked {
  vault: Map<string, string>;
}

const extractionSchema = z.object({
  memories: z
    .array(
      z.object({
        type: z.enum(MEMORY_KINDS),
        content: z.string().trim().min(1).max(4000),
        summary: z.string().trim().min(1).max(300),
        source_messages: z.array(z.number().int().min(0)).min(1).max(50),
        changes_previous: z.boolean().optional(),
      }),
    )
    .max(MAX_CANDIDATES),
});

/**
 * Extraction: the LLM reads the conversation (secrets masked) and lists the
 * durable facts worth keeping, as candidates. One request, and one repair
 * round when the answer is not the JSON asked for; a second bad answer is
 * UNAVAILABLE LLM_BAD_ANSWER.
 */
export async function extractByLlm(
  llm: LlmClient,
  ctx: CallContext,
  messages: readonly ConversationMessage[],
  kinds: readonly MemoryKind[],
  masked: Masked,
): Promise<{ candidates: Candidate[]; calls: number; left: number }> {
  // The newest messages that fit the prompt (a conversation may hold 200 of 20 000 characters); their numbers stay.
  const lines: string[] = [];
  let chars = 0;
  for (let i = messages.length - 1; i >= 0; i--) {
    const m = messages[i]!;
    const line = `[${i}] ${m.role}${m.time ? ` (${m.time})` : ""}: ${maskSecrets(m.content, masked.vault)}`;
    if (lines.length > 0 && chars + line.length > PROMPT_CONVERSATION_CHARS) break;
    lines.unshift(line);
    chars += line.length;
  }
  const left = messages.length - lines.length;
  const shown = lines.join("\n\n");
  const prompt = `你在为用户维护长期记忆。阅读下面的对话，列出值得长期记住的事实。

值得记住：用户的偏好与习惯、项目事实（环境、服务、位置、版本、截止时间）、做出的决定、用户给出的命令及其输出、配置（参数、连接信息、key=value）、人员与角色（谁负责什么）。
不要记住：寒暄与闲聊；提问与假设（"如果以后……"）；只针对这一次的要求（"这次先用表格"）；助手提出但用户没有接受的建议；助手自己写的代码；别人的偏好除非用户要求记住。
⟦secret:N⟧ 是已隐去的密钥、密码等：需要时在 content 中原样保留占位符，summary 中不要写。
一条记忆只讲一件事，content 用用户的原话写完整（命令与配置原样保留），summary 一句话。
changes_previous：这条是否改变了用户以前的偏好或事实（"以后改用……"、"不再……"、"from now on"）。
${kinds.length < MEMORY_KINDS.length ? `只保留这些类型：${kinds.join(", ")}。\n` : ""}最多 ${MAX_CANDIDATES} 条；没有值得记住的就返回空数组。

对话（[序号] 角色 (时间): 内容）：
${shown}

只返回 JSON：
{"memories": [{"type": "${MEMORY_KINDS.join("|")}", "content": "…", "summary": "…", "source_messages": [序号], "changes_previous": false}]}`;
  const asked = await askJson(
    llm,
    ctx,
    [{ role: "user", content: prompt }],
    (answer) => readExtraction(answer, messages.length),
    { repairs: 1, repairMessage: REPAIR },
  );
  if (!asked.ok) throw badAnswer(text("extract the memories", "抽取记忆"), asked.problem);
  const candidates = asked.value.memories
    .filter((m) => kinds.includes(m.type))
    .map((m): Candidate => {
      const sources = [...new Set(m.source_messages)].sort((a, b) => a - b);
      const times = sources.map((i) => messages[i]!.time).filter((t): t is string => t !== undefined);
      return {
        memory_type: m.type,
        content: unmaskSecrets(m.content, masked.vault),
        // The summary is the LLM's, with any secret it copied back in as written replaced too.
        summary: summaryOf(labelPlaceholders(m.summary)),
        sources,
        stated_at: times.sort((a, b) => Date.parse(a) - Date.parse(b)).pop(),
        revises: m.changes_previous === true,
        why: "LLM 从对话中抽取",
      };
    });
  return { candidates, calls: asked.answers.length, left };
}

function readExtraction(answer: string, messageCount: number): Reading<z.output<typeof extractionSchema>> {
  const read = readJsonObject(answer);
  if (!read.ok) return read;
  const parsed = extractionSchema.safeParse(read.value);
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    return { ok: false, problem: `${issue.path.join(".") || "the answer"}: ${issue.message}` };
  }
  const outOfRange = parsed.data.memories.find((m) => m.source_messages.some((i) => i >= messageCount));
  if (outOfRange)
    return { ok: false, problem: `source_messages must be message numbers from 0 to ${messageCount - 1}` };
  return { ok: true, value: parsed.data };
}

const OPERATIONS = ["ADD", "UPDATE", "SUPERSEDE", "NOOP"] as const;

const decisionSchema = z.object({
  decisions: z.array(
    z.object({
      id: z.number().int().min(0),
      operation: z.enum(OPERATIONS),
      target: z.string().optional().nullable(),
      content: z.string().trim().max(4000).optional().nullable(),
      reason: z.string().trim().max(300).optional().nullable(),
    }),
  ),
});

/** A candidate to decide on, with the user's memories most like it. */
export interface ToDecide {
  candidate: Candidate;
  similar: MemoryRecord[];
}

/**
 * Decision: for each candidate with similar memories, the LLM picks ADD,
 * UPDATE (with the merged content), SUPERSEDE or NOOP against one of them
 * (the mem0 way, our prompt). One request for them all, one repair round; a
 * target that is not one of the candidate's similar memories, or a candidate
 * left out, is a bad answer.
 */
export async function decideByLlm(
  llm: LlmClient,
  ctx: CallContext,
  items: readonly ToDecide[],
  newKey: (c: Candidate) => string,
  masked: Masked,
): Promise<{ decisions: { decision: Decision; content?: string }[]; calls: number }> {
  const mask = (text: string) => maskSecrets(text, masked.vault);
  const listed = items
    .map(({ candidate: c, similar }, id) => {
      const olds = similar
        .map(
          (r) =>
            // A sensitive memory is shown by its summary: its content is for callers with the permission only.
            `    - key=${r.memory_key} type=${r.memory_type} stated=${r.stated_at.toISOString()}: ${mask(r.sensitive ? r.summary : `${r.summary}\n${[...r.content].slice(0, SHOWN_CHARS).join("")}`).replaceAll("\n", " ")}`,
        )
        .join("\n");
      return `候选 ${id}（${c.memory_type}${c.revises ? "，说明有改变" : ""}）：${mask(c.content).replaceAll("\n", " ")}\n  用户已有的相似记忆：\n${olds}`;
    })
    .join("\n\n");
  const prompt = `下面是从用户的新对话中抽取的候选记忆，以及用户已有的相似记忆。请为每个候选决定一项操作：
- ADD：已有记忆里没有这件事，新建一条。
- UPDATE：与某条已有记忆是同一件事，新内容补充或细化了它；target 为那条记忆的 key，content 为合并后的完整内容。
- SUPERSEDE：与某条已有记忆是同一主题，但偏好或事实已经改变（新的取代旧的）；target 为被取代记忆的 key。
- NOOP：某条已有记忆已经说了同样的事；target 为那条记忆的 key。
target 只能是该候选自己列出的相似记忆的 key。⟦secret:N⟧ 是已隐去的密钥，原样保留。

${listed}

只返回 JSON，每个候选一项：
{"decisions": [{"id": 0, "operation": "ADD|UPDATE|SUPERSEDE|NOOP", "target": "key 或空", "content": "UPDATE 时合并后的内容", "reason": "一句话理由"}]}`;
  const asked = await askJson(llm, ctx, [{ role: "user", content: prompt }], (answer) => readDecisions(answer, items), {
    repairs: 1,
    repairMessage: REPAIR,
  });
  if (!asked.ok) throw badAnswer(text("decide what to do with each memory", "决定每条记忆如何处理"), asked.problem);
  const decisions = asked.value.map((d, id) => {
    const c = items[id]!.candidate;
    const reason = d.reason ? labelPlaceholders(d.reason) : "LLM 的决定";
    const target = d.target ?? "";
    const decision: Decision =
      d.operation === "ADD"
        ? { operation: "ADD", memory_key: newKey(c), supersedes: "", reason }
        : d.operation === "SUPERSEDE"
          ? { operation: "SUPERSEDE", memory_key: newKey(c), supersedes: target, reason }
          : { operation: d.operation, memory_key: target, supersedes: "", reason };
    return d.operation === "UPDATE" && d.content
      ? { decision, content: unmaskSecrets(d.content, masked.vault) }
      : { decision };
  });
  return { decisions, calls: asked.answers.length };
}

type RawDecision = z.output<typeof decisionSchema>["decisions"][number];

function readDecisions(answer: string, items: readonly ToDecide[]): Reading<RawDecision[]> {
  const read = readJsonObject(answer);
  if (!read.ok) return read;
  const parsed = decisionSchema.safeParse(read.value);
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    return { ok: false, problem: `${issue.path.join(".") || "the answer"}: ${issue.message}` };
  }
  const byId = new Map<number, RawDecision>();
  for (const d of parsed.data.decisions) {
    if (d.id >= items.length) return { ok: false, problem: `id ${d.id} is not a candidate (0..${items.length - 1})` };
    byId.set(d.id, d);
  }
  const out: RawDecision[] = [];
  for (const [id, { similar }] of items.entries()) {
    const d = byId.get(id);
    if (!d) return { ok: false, problem: `candidate ${id} has no decision` };
    if (d.operation !== "ADD" && !similar.some((r) => r.memory_key === d.target))
      return {
        ok: false,
        problem: `candidate ${id}: ${d.operation} needs a target among its similar memories (${similar.map((r) => r.memory_key).join(", ")})`,
      };
    out.push(d);
  }
  return { ok: true, value: out };
}

/** The LLM's answer twice unusable; `problem` is the check's own words on its JSON (English, like the JSON's keys). */
function badAnswer(what: Text, problem: string): ToolError {
  return new ToolError({
    code: "unavailable",
    reason: "LLM_BAD_ANSWER",
    message: text(
      `the LLM did not ${what.en} in a usable form, twice (${problem}); nothing was stored`,
      `LLM 两次都未能以可用的形式${what.zh}（${problem}）；未保存任何内容`,
    ),
    hint: {
      message: text(
        'Retry, or call again with mode "rules" to keep the explicit statements only.',
        '重试，或用 mode "rules" 重新调用，只保存明确的陈述。',
      ),
      validValues: ["rules"],
    },
  });
}
