import { z } from "zod";
import type { CallContext } from "../../core/call-context";
import { comparable } from "../../core/text";
import { type BoundedCompletion, completeWithin, type LlmClient } from "../../upstream/llm-client";
import { readJsonObject } from "../../upstream/llm-json";

/** Names asked for, at most. */
export const MAX_PROPOSED = 5;
/** The proposal may take this long: a keyword context call is waiting for it. */
export const PROPOSAL_TIMEOUT_MS = 4_000;
const MAX_NAME_CHARS = 40;

/** What the mention was looked up in: the object type as the session's schema describes it. */
export interface ProposalTarget {
  objectTypeId: string;
  objectTypeName: string;
  comment: string;
}

export function proposalPrompt(keyword: string, t: ProposalTarget): string {
  return `用户在知识网络中查找一个「${t.objectTypeName || t.objectTypeId}」（对象类型 ${t.objectTypeId}${t.comment ? `：${t.comment}` : ""}），输入的是：
${JSON.stringify(keyword)}
按这个写法没有找到任何实例。请给出它可能指的规范名称：中文正式名称、英文名称、常见的全称或别称，最多 ${MAX_PROPOSED} 个，最可能的在前。
如果它不是一个「${t.objectTypeName || t.objectTypeId}」，或你不确定它指什么，返回空列表，不要猜。

只返回 JSON：{"names": ["名称1", "名称2"]}`;
}

const answerSchema = z.object({ names: z.array(z.unknown()) });

/** The outcome of a proposal: the names, or why there are none. */
export type Proposal = { ok: true; names: string[] } | Extract<BoundedCompletion, { ok: false }>;

/**
 * Canonical names the LLM proposes for a mention that matched nothing: one
 * attempt within PROPOSAL_TIMEOUT_MS, the answer read with zod, trimmed,
 * deduplicated, the mention itself left out. The names are only candidates:
 * the caller looks them up and scores them like any name.
 */
export async function proposeNames(
  llm: LlmClient,
  ctx: CallContext,
  keyword: string,
  target: ProposalTarget,
): Promise<Proposal> {
  const answer = await completeWithin(llm, ctx, proposalPrompt(keyword, target), PROPOSAL_TIMEOUT_MS);
  if (!answer.ok) return answer;
  const read = readJsonObject(answer.content);
  const parsed = read.ok ? answerSchema.safeParse(read.value) : undefined;
  if (!parsed?.success)
    return { ok: false, error: new Error("the LLM's answer is not the JSON asked for"), timedOut: false };
  const typed = comparable(keyword);
  const seen = new Set<string>([typed]);
  const names: string[] = [];
  for (const n of parsed.data.names) {
    if (typeof n !== "string") continue;
    const name = n.trim();
    const key = comparable(name);
    if (key === "" || [...name].length > MAX_NAME_CHARS || seen.has(key)) continue;
    seen.add(key);
    names.push(name);
    if (names.length === MAX_PROPOSED) break;
  }
  return { ok: true, names };
}
