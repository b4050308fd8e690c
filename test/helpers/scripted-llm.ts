import * as http from "node:http";
import type { AddressInfo } from "node:net";
import { embedLocally, LOCAL_EMBEDDING_DIMENSIONS } from "../../src/upstream/local-embedder";

/** One scripted answer of the fake LLM. */
export interface Reply {
  /** HTTP status, default 200. */
  status?: number;
  /** The assistant message (200 answers), wrapped in a chat completion. */
  content?: string;
  /** Function calls the assistant makes (arguments as an object, or as raw text to test malformed JSON). */
  toolCalls?: { name: string; arguments: Record<string, unknown> | string; id?: string }[];
  /** A raw body instead of a completion (e.g. an error body or garbage). */
  body?: string;
  /** Wait this long before answering, ms. */
  delayMs?: number;
}

export interface ChatRequest {
  model: string;
  /** As sent: content is null on an assistant turn that only calls tools; tool turns carry tool_call_id. */
  messages: {
    role: string;
    content: string;
    tool_call_id?: string;
    tool_calls?: { id: string; function: { name: string; arguments: string } }[];
  }[];
  response_format?: { type: string };
  /** The function tools offered, when any. */
  tools?: { type: string; function: { name: string; description: string; parameters: Record<string, unknown> } }[];
  tool_choice?: unknown;
  headers: http.IncomingHttpHeaders;
  /** When the request arrived, ms since the server started. */
  at: number;
}

/** One request to /v1/embeddings. */
export interface EmbeddingsRequest {
  model: string;
  input: string[];
}

/**
 * A real HTTP server speaking the OpenAI protocol with scripted answers, for
 * tests of everything that calls an LLM: /v1/chat/completions answers from a
 * queue of replies, else from a function of the request; /v1/embeddings
 * returns the local lexical embedding of each input — or, for an input that
 * holds a term of one of `concepts` (groups of texts that mean the same), a
 * vector of those meanings, as a neural model would place synonyms together
 * (with `lexicalWeight`, the input's lexical embedding at that weight beside
 * them, so two texts meaning the same are close but not identical, as with a
 * real model); /rerank scores by shared characters. Every chat and embeddings
 * request is recorded.
 */
export async function startScriptedLlm(
  fallback: (req: ChatRequest) => Reply | Promise<Reply> = () => ({ content: "{}" }),
  opts: { concepts?: string[][]; lexicalWeight?: number } = {},
) {
  const concepts = (opts.concepts ?? []).map((group) => group.map((term) => term.normalize("NFKC").toLowerCase()));
  const lexicalWeight = opts.lexicalWeight ?? 0;
  const queue: Reply[] = [];
  const requests: ChatRequest[] = [];
  const aborted: ChatRequest[] = [];
  const embeddingRequests: EmbeddingsRequest[] = [];
  const started = Date.now();
  let answer = fallback;
  const server = http.createServer(async (req, res) => {
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    const body = JSON.parse(Buffer.concat(chunks).toString("utf8") || "{}") as Record<string, unknown>;
    const path = (req.url ?? "").split("?")[0];
    if (path === "/v1/embeddings") {
      const input = (Array.isArray(body["input"]) ? body["input"] : [body["input"]]) as string[];
      embeddingRequests.push({ model: String(body["model"]), input });
      const data = input.map((text, index) => ({ index, embedding: embedding(text, concepts, lexicalWeight) }));
      res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify({ data, model: body["model"] }));
      return;
    }
    if (path === "/rerank") {
      const query = String(body["query"] ?? "");
      const docs = (body["documents"] as string[]) ?? [];
      const results = docs.map((d, index) => ({
        index,
        relevance_score: [...new Set(query)].filter((ch) => d.includes(ch)).length / Math.max(1, new Set(query).size),
      }));
      res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify({ results }));
      return;
    }
    if (path !== "/v1/chat/completions") {
      res.writeHead(404).end();
      return;
    }
    const chat: ChatRequest = {
      model: String(body["model"]),
      messages: body["messages"] as ChatRequest["messages"],
      response_format: body["response_format"] as ChatRequest["response_format"],
      tools: body["tools"] as ChatRequest["tools"],
      tool_choice: body["tool_choice"],
      headers: req.headers,
      at: Date.now() - started,
    };
    requests.push(chat);
    // A request its client gave up on (an abort, a timeout) closes before it is answered.
    res.once("close", () => {
      if (!res.writableFinished) aborted.push(chat);
    });
    const reply = queue.shift() ?? (await answer(chat));
    if (reply.delayMs) await new Promise((r) => setTimeout(r, reply.delayMs));
    if (res.destroyed) return;
    const status = reply.status ?? 200;
    const text =
      reply.body ??
      JSON.stringify({
        id: `chatcmpl-${requests.length}`,
        object: "chat.completion",
        model: chat.model,
        choices: [
          {
            index: 0,
            message: {
              role: "assistant",
              content: reply.content ?? (reply.toolCalls ? null : ""),
              ...(reply.toolCalls
                ? {
                    tool_calls: reply.toolCalls.map((c, i) => ({
                      id: c.id ?? `call_${requests.length}_${i}`,
                      type: "function",
                      function: {
                        name: c.name,
                        arguments: typeof c.arguments === "string" ? c.arguments : JSON.stringify(c.arguments),
                      },
                    })),
                  }
                : {}),
            },
            finish_reason: reply.toolCalls ? "tool_calls" : "stop",
          },
        ],
      });
    res.writeHead(status, { "content-type": "application/json" }).end(text);
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const port = (server.address() as AddressInfo).port;
  return {
    baseUrl: `http://127.0.0.1:${port}/v1`,
    rerankUrl: `http://127.0.0.1:${port}/rerank`,
    requests,
    /** The chat requests whose client closed the connection before the answer was sent. */
    aborted,
    /** Every request to /v1/embeddings, in order. */
    embeddingRequests,
    /** Answers the next chat requests with these replies, in order. */
    queue: (...replies: Reply[]) => queue.push(...replies),
    /** Answers chat requests that find the queue empty. */
    setFallback: (f: typeof fallback) => (answer = f),
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

export type ScriptedLlm = Awaited<ReturnType<typeof startScriptedLlm>>;

/**
 * The scripted embedding of a text: its meanings (the concept groups it names)
 * when it names any, beside its characters at `lexicalWeight` (unit length
 * overall); else its characters.
 */
function embedding(text: string, concepts: readonly string[][], lexicalWeight: number): number[] {
  const lower = text.normalize("NFKC").toLowerCase();
  const meanings = concepts.map((group) => (group.some((term) => lower.includes(term)) ? 1 : 0));
  const named = meanings.reduce((s: number, x) => s + x, 0);
  if (named === 0) return [...embedLocally(text), ...meanings];
  const norm = Math.sqrt(1 + lexicalWeight * lexicalWeight);
  const characters =
    lexicalWeight === 0 ? new Array<number>(LOCAL_EMBEDDING_DIMENSIONS).fill(0) : [...embedLocally(text)];
  return [...characters.map((x) => (lexicalWeight * x) / norm), ...meanings.map((x) => x / Math.sqrt(named) / norm)];
}
