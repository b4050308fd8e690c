import { randomUUID } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { MemRecallService } from "../../gen/contextloader/memrecall/v1/memrecall_pb";
import { clientWith } from "../helpers/rpc";
import { type ServiceProcess, startServiceProcess } from "../helpers/service-process";
import { events, FAR_BACK_TALK, MEMORIES } from "../memrecall/recall-fixtures";
import { healthBoundMs, withHealthPoll } from "./conditions-health-poll";

/**
 * The largest Recall a request may carry (issue 20 §5): 200 messages of
 * 20,000 characters, every one in the first window. The recall reads them
 * all, in slices: /healthz, polled beside it, keeps answering (within
 * healthBoundMs: 400 ms, or 4 × its slowest before the call on a loaded machine).
 */

const owner = `u-hostile-recall-${randomUUID().slice(0, 8)}`;
const headers = { "x-account-id": owner };
const MESSAGES = 200;
const CHARS = 20_000;

// Its own process: the poll then sees the service's event loop alone, not the test client's work beside it.
let server: ServiceProcess;
beforeAll(async () => {
  server = await startServiceProcess({});
  const c = clientWith(MemRecallService, server.baseUrl, headers);
  for (const m of MEMORIES) await c.storeMemory(m);
  // One small recall first: jieba's dictionary and its IDF table load once per process (a few hundred ms), not per call.
  await events(c, { messages: FAR_BACK_TALK });
}, 60_000);
afterAll(() => server?.destroy());

/**
 * Chatter of `n` characters from a fixed seed, in English: 200 messages of it
 * fit the default READ_MAX_BYTES (4 MiB) as the did; Chinese, at three
 * bytes a character, would not.
 */
function chatter(n: number, seed: number): string {
  const words = (
    "we discussed the report service deployment last week monitoring alerts logs meeting booking model error " +
    "customer requirements document the quick brown fox jumps over lazy dog release pipeline review"
  ).split(" ");
  let s = seed;
  let out = "";
  while (out.length < n) {
    s = (s * 1103515245 + 12345) % 2147483648;
    out += words[s % words.length]! + (s % 7 === 0 ? ", " : " ");
  }
  return out.slice(0, n);
}

/** A Connect streaming request body (one enveloped JSON message), written before the call. */
function connectEnvelope(message: unknown): Uint8Array<ArrayBuffer> {
  const json = new TextEncoder().encode(JSON.stringify(message));
  const out = new Uint8Array(5 + json.length);
  new DataView(out.buffer).setUint32(1, json.length);
  out.set(json, 5);
  return out;
}

/** The enveloped messages of a Connect streaming answer: the events, then the end of the stream. */
function envelopes(body: Buffer): { flags: number; json: Record<string, unknown> }[] {
  const out: { flags: number; json: Record<string, unknown> }[] = [];
  for (let at = 0; at < body.length; ) {
    const length = body.readUInt32BE(at + 1);
    out.push({ flags: body[at]!, json: JSON.parse(body.subarray(at + 5, at + 5 + length).toString("utf8")) });
    at += 5 + length;
  }
  return out;
}

describe("a Recall of 200 messages × 20,000 characters", () => {
  it("reads the whole window and hands off, /healthz answering meanwhile (deterministic strategy)", async () => {
    const messages = Array.from({ length: MESSAGES }, (_, i) => ({
      role: i % 2 === 0 ? "assistant" : "user",
      content: chatter(CHARS, i + 1),
    }));
    messages.push({ role: "user", content: "帮我把新的报表服务接到生产库上，按照我之前的数据库配置来" });
    messages.shift();
    // Written before the poll starts: what is measured is the server's work, not the test client's encoding.
    const body = connectEnvelope({ messages, context_window: MESSAGES, strategy: "deterministic" });
    const p = await withHealthPoll(server, async (mark) => {
      const res = await fetch(`${server.baseUrl}/contextloader.memrecall.v1.MemRecallService/Recall`, {
        method: "POST",
        headers: { "content-type": "application/connect+json", ...headers },
        body,
      });
      // Measured from the first event on: reading and decoding 4 MB is the RPC codec's work, before Recall runs.
      const chunks: Uint8Array[] = [];
      const reader = res.body!.getReader();
      for (let read = await reader.read(); !read.done; read = await reader.read()) {
        if (chunks.length === 0) mark();
        chunks.push(read.value);
      }
      return envelopes(Buffer.concat(chunks));
    });
    expect(p.outcome.ok).toBe(true);
    const stream = p.outcome.ok ? p.outcome.value : [];
    const end = stream.at(-1)!;
    // The end of the stream carries no error; the last event before it is the handoff.
    expect(end.flags).toBe(2);
    expect(end.json["error"]).toBeUndefined();
    const last = stream.at(-2)!.json as { handoff?: { relevant_memory_keys?: string[]; context_window_used?: number } };
    expect(last.handoff?.context_window_used).toBe(MESSAGES);
    expect(last.handoff?.relevant_memory_keys).toEqual(["db_config_prod"]);
    expect(p.polls).toBeGreaterThan(0);
    expect(p.worstHealthMs).toBeLessThan(healthBoundMs(p));
  }, 60_000);
});
