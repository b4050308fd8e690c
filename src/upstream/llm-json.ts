import { jsonrepair } from "jsonrepair";
import type { CallContext } from "../core/call-context";
import type { ChatMessage, LlmClient } from "./llm-client";

export type JsonObjectRead =
  | { ok: true; value: Record<string, unknown>; repaired: boolean }
  | { ok: false; problem: string };

/**
 * Reads the JSON object an LLM answered with. A ```json fence wins when there
 * is one (models put an example before the real answer); otherwise the
 * balanced top-level {...} blocks of the text are tried in order, so chatter
 * with braces around the answer does not matter. A block that is almost JSON
 * (single quotes, trailing commas, comments) is repaired with jsonrepair. A
 * top-level array is refused: every caller asks for an object.
 */
export function readJsonObject(text: string): JsonObjectRead {
  const fenced = /```(?:json|JSON)?[ \t]*\r?\n([\s\S]*?)```/.exec(text);
  const source = fenced ? fenced[1]! : text;
  const blocks = topLevelObjects(source);
  if (blocks.length === 0) {
    return {
      ok: false,
      problem: /^\s*\[/.test(source)
        ? "the answer is a JSON array; a JSON object was asked for"
        : "the answer contains no JSON object",
    };
  }
  for (const block of blocks) {
    const value = parseObject(block);
    if (value) return { ok: true, value, repaired: false };
  }
  let problem = "";
  for (const block of blocks) {
    try {
      const value = parseObject(jsonrepair(block));
      if (value) return { ok: true, value, repaired: true };
    } catch (err) {
      problem ||= (err as Error).message;
    }
  }
  return { ok: false, problem: `the answer is not valid JSON: ${problem || "no block is a JSON object"}` };
}

/** What a reader made of one answer: the value to keep, or what is wrong with it (told to the LLM in the repair round). */
export type Reading<T, P = string> = { ok: true; value: T } | { ok: false; problem: P };

export interface AskJsonOptions<P> {
  /** Repair rounds after the first answer: at most 1 + repairs LLM calls. */
  repairs: number;
  /** The user message that asks again after an answer with this problem. */
  repairMessage(problem: P): string;
}

/** The last reading, and what the conversation took. */
export type Asked<T, P> = Reading<T, P> & {
  /** Every answer, in order. */
  answers: string[];
  /** Repair rounds asked for (answers.length - 1). */
  repairs: number;
  /** Characters of every message sent, summed over all calls. */
  promptChars: number;
};

/**
 * Asks the LLM for a JSON object and reads the answer with `read` (which
 * usually starts with readJsonObject). An answer it cannot use goes back to
 * the LLM with `repairMessage(problem)` after it, up to `repairs` times. The
 * last reading comes back either way: whether to fail, or to use what was
 * read, is the caller's call. An LLM failure (timeout, HTTP) is thrown as the
 * client threw it; `messages` is not changed.
 */
export async function askJson<T, P = string>(
  llm: LlmClient,
  ctx: CallContext,
  messages: readonly ChatMessage[],
  read: (answer: string) => Reading<T, P>,
  opts: AskJsonOptions<P>,
): Promise<Asked<T, P>> {
  const conversation = [...messages];
  const answers: string[] = [];
  let promptChars = 0;
  for (;;) {
    promptChars += conversation.reduce((n, m) => n + m.content.length, 0);
    const { content } = await llm.complete(ctx, conversation, { json: true });
    answers.push(content);
    const reading = read(content);
    const repairs = answers.length - 1;
    if (reading.ok || repairs >= opts.repairs) return { ...reading, answers, repairs, promptChars };
    conversation.push({ role: "assistant", content }, { role: "user", content: opts.repairMessage(reading.problem) });
  }
}

function parseObject(s: string): Record<string, unknown> | undefined {
  try {
    const v: unknown = JSON.parse(s);
    return v !== null && typeof v === "object" && !Array.isArray(v) ? (v as Record<string, unknown>) : undefined;
  } catch {
    return undefined;
  }
}

/** The balanced {...} blocks at nesting depth zero, skipping braces inside strings; an unclosed last block runs to the end. */
function topLevelObjects(text: string): string[] {
  const out: string[] = [];
  let depth = 0;
  let start = -1;
  let quote = "";
  for (let i = 0; i < text.length; i++) {
    const c = text[i]!;
    if (quote) {
      if (c === "\\") i++;
      else if (c === quote) quote = "";
      continue;
    }
    if (depth > 0 && (c === '"' || c === "'")) quote = c;
    else if (c === "{") {
      if (depth++ === 0) start = i;
    } else if (c === "}" && depth > 0 && --depth === 0) out.push(text.slice(start, i + 1));
  }
  if (depth > 0) out.push(text.slice(start));
  return out;
}
