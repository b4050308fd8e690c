import { randomUUID } from "node:crypto";
import * as http from "node:http";
import type { AddressInfo } from "node:net";
import { Code, type ConnectError } from "@connectrpc/connect";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { KnowledgeRetrievalService } from "../../gen/contextloader/knowledge/v1/knowledge_pb";
import { MemRecallService } from "../../gen/contextloader/memrecall/v1/memrecall_pb";
import { ErrorInfoSchema } from "../../gen/google/rpc/error_details_pb";
import { clientWith, failure } from "../helpers/rpc";
import { startServer, type TestServer } from "../helpers/server";

/**
 * Issue 34, "Bad input": an embeddings endpoint whose answer cannot be used as
 * it is — the wrong count, indexes not 0..n-1, vectors of two sizes, a
 * component that is not a finite number, a zero vector — makes the call that
 * needed it UNAVAILABLE EMBEDDINGS_UNAVAILABLE saying what was wrong, never a
 * search that silently ranks without it.
 */

const DIMENSIONS = 8;

/** A usable vector for a text: its characters hashed into DIMENSIONS components, never all zero. */
function goodVector(text: string, dimensions = DIMENSIONS): number[] {
  const v = new Array<number>(dimensions).fill(0);
  for (const [i, ch] of [...text].entries()) v[(ch.codePointAt(0)! + i) % dimensions]! += 1;
  v[0]! += 0.5;
  return v;
}

/** The endpoint's answer to a request for `input`: a JSON body as text, so that it can hold what JSON.stringify cannot write (1e999, NaN). */
type Answer = (input: string[]) => string;

const good: Answer = (input) =>
  JSON.stringify({ data: input.map((t, index) => ({ index, embedding: goodVector(t) })), model: "m" });

/** An OpenAI-compatible /v1/embeddings on loopback answering with `answer` (settable), recording each request's inputs. */
async function startEmbeddings() {
  let answer: Answer = good;
  const inputs: string[][] = [];
  const server = http.createServer(async (req, res) => {
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    const body = JSON.parse(Buffer.concat(chunks).toString("utf8")) as { input: string[] };
    inputs.push(body.input);
    res.writeHead(200, { "content-type": "application/json" }).end(answer(body.input));
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return {
    baseUrl: `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`,
    inputs,
    answerWith: (a: Answer) => {
      answer = a;
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

type Embeddings = Awaited<ReturnType<typeof startEmbeddings>>;

function expectRefused(err: ConnectError, message: RegExp): void {
  expect(err.code).toBe(Code.Unavailable);
  expect(err.findDetails(ErrorInfoSchema)[0]?.reason).toBe("EMBEDDINGS_UNAVAILABLE");
  expect(err.rawMessage).toMatch(message);
}

const memrecall = (server: TestServer, account: string) =>
  clientWith(MemRecallService, server.baseUrl, { "x-account-id": account });

describe("an embeddings endpoint whose answers cannot be used", () => {
  let embeddings: Embeddings;
  let server: TestServer;
  const account = `u-${randomUUID().slice(0, 8)}`;
  beforeAll(async () => {
    embeddings = await startEmbeddings();
    // No start-up probe: its requests would come before the ones this file counts and checks.
    server = await startServer({
      EMBEDDINGS_BASE_URL: embeddings.baseUrl,
      EMBEDDINGS_MODEL: "scripted-embed",
      MEMRECALL_CALIBRATION_TIMEOUT_MS: "0",
    });
    // A first usable answer: the model's vectors have DIMENSIONS components from now on.
    await memrecall(server, account).storeMemory({
      memoryKey: "db",
      summary: "生产数据库配置",
      content: "主库 pg-prod.internal:5432，连接池 80。",
    });
  });
  afterAll(async () => {
    await server.close();
    await embeddings.close();
  });
  beforeEach(() => embeddings.answerWith(good));

  const cases: [string, Answer, RegExp][] = [
    [
      "two vectors for one input",
      (input) =>
        JSON.stringify({ data: [...input, ...input].map((t, index) => ({ index, embedding: goodVector(t) })) }),
      /^the embeddings endpoint returned 2 vectors for 1 inputs$/,
    ],
    [
      "an index that is not 0..n-1",
      (input) => JSON.stringify({ data: input.map((t, i) => ({ index: i + 1, embedding: goodVector(t) })) }),
      /^the embeddings endpoint returned a vector with index 1 for 1 inputs \(indexes 0 to 0\)$/,
    ],
    [
      "a vector of another size than before",
      (input) => JSON.stringify({ data: input.map((t, index) => ({ index, embedding: goodVector(t, 4) })) }),
      /^the embeddings endpoint returned a vector of 4 dimensions for input 0 where it returned 8 before for model scripted-embed$/,
    ],
    [
      "a component JSON reads as Infinity (1e999)",
      () => `{"data":[{"index":0,"embedding":[0.1,1e999,0.2,0.1,0.1,0.1,0.1,0.1]}]}`,
      /^the embeddings endpoint returned a vector for input 0 whose component 1 is Infinity, not a finite number$/,
    ],
    [
      "a string where a number goes",
      () => `{"data":[{"index":0,"embedding":["0.1",0.2,0.2,0.1,0.1,0.1,0.1,0.1]}]}`,
      /^the embeddings endpoint returned a vector for input 0 whose component 0 is a string, not a finite number$/,
    ],
    [
      "a null component",
      () => `{"data":[{"index":0,"embedding":[0.1,0.2,null,0.1,0.1,0.1,0.1,0.1]}]}`,
      /^the embeddings endpoint returned a vector for input 0 whose component 2 is null, not a finite number$/,
    ],
    [
      "NaN as Python's json.dumps writes it (not JSON)",
      () => `{"data":[{"index":0,"embedding":[NaN,0.2,0.2,0.1,0.1,0.1,0.1,0.1]}]}`,
      /^the embeddings endpoint answered HTTP 200 with a body this service cannot read$/,
    ],
    [
      "a zero vector",
      () => JSON.stringify({ data: [{ index: 0, embedding: new Array(DIMENSIONS).fill(0) }] }),
      /^the embeddings endpoint returned a zero vector for input 0, which has no direction to compare$/,
    ],
    [
      "an empty vector",
      () => JSON.stringify({ data: [{ index: 0, embedding: [] }] }),
      /^the embeddings endpoint returned a vector of 0 dimensions for input 0 where it returned 8 before/,
    ],
  ];

  for (const [name, answer, message] of cases) {
    describe(name, () => {
      for (const mode of ["semantic", "hybrid"] as const) {
        it(`SearchMemories (${mode}) is UNAVAILABLE EMBEDDINGS_UNAVAILABLE saying so`, async () => {
          embeddings.answerWith(answer);
          const err = await failure(
            memrecall(server, account).searchMemories({ query: "数据库连接池", searchMode: mode }),
          );
          expectRefused(err, message);
        });
      }

      it("StoreMemory is UNAVAILABLE EMBEDDINGS_UNAVAILABLE and stores nothing", async () => {
        embeddings.answerWith(answer);
        const c = memrecall(server, account);
        const key = `k-${randomUUID().slice(0, 8)}`;
        expectRefused(await failure(c.storeMemory({ memoryKey: key, summary: "缓存", content: "Redis 7" })), message);
        expect((await failure(c.getMemoryDetail({ memoryKey: key }))).code).toBe(Code.NotFound);
      });
    });
  }

  it("answers in Chinese too", async () => {
    embeddings.answerWith(() => JSON.stringify({ data: [{ index: 0, embedding: new Array(DIMENSIONS).fill(0) }] }));
    const c = clientWith(MemRecallService, server.baseUrl, { "x-account-id": account, "accept-language": "zh" });
    const err = await failure(c.searchMemories({ query: "数据库", searchMode: "semantic" }));
    expectRefused(err, /^向量化（embeddings）端点为第 0 条输入返回了零向量，无法比较方向$/);
  });

  it("keeps what was stored: a replacement refused leaves the memory as it was, and the same call succeeds once the endpoint answers well", async () => {
    const c = memrecall(server, account);
    embeddings.answerWith(() => JSON.stringify({ data: [] }));
    const replaced = {
      memoryKey: "db",
      summary: "生产数据库配置（新）",
      content: "主库 pg-prod-2.internal:5432，连接池 120。",
    };
    expectRefused(await failure(c.storeMemory(replaced)), /returned 0 vectors for 1 inputs/);
    expect((await c.getMemoryDetail({ memoryKey: "db" })).content).toBe("主库 pg-prod.internal:5432，连接池 80。");
    // Keyword search needs no embeddings: it still answers.
    const keyword = await c.searchMemories({ query: "连接池", searchMode: "keyword" });
    expect(keyword.results.map((r) => r.memoryKey)).toEqual(["db"]);
    embeddings.answerWith(good);
    await c.storeMemory(replaced);
    expect((await c.getMemoryDetail({ memoryKey: "db" })).content).toBe(replaced.content);
    const semantic = await c.searchMemories({ query: "连接池", searchMode: "semantic", minRelevanceScore: 0 });
    expect(semantic.results.map((r) => r.memoryKey)).toContain("db");
  });
});

describe("an embeddings endpoint answering several inputs at once", () => {
  let embeddings: Embeddings;
  let server: TestServer;
  beforeAll(async () => {
    embeddings = await startEmbeddings();
    // No start-up probe: its requests would come before the ones this file counts and checks.
    server = await startServer({
      EMBEDDINGS_BASE_URL: embeddings.baseUrl,
      EMBEDDINGS_MODEL: "scripted-embed",
      MEMRECALL_CALIBRATION_TIMEOUT_MS: "0",
    });
  });
  afterAll(async () => {
    await server.close();
    await embeddings.close();
  });

  // RerankConcepts (vector) embeds the concepts' descriptions in one request: several inputs per answer.
  const rerank = () =>
    failure(
      clientWith(KnowledgeRetrievalService, server.baseUrl, { "x-account-id": "u-rerank" }).rerankConcepts({
        queryUnderstanding: { originQuery: "上气道梗阻有哪些症状", processedQuery: "上气道梗阻 症状" },
        concepts: [
          { conceptType: "object_type", conceptId: "disease", conceptName: "疾病" },
          { conceptType: "object_type", conceptId: "symptom", conceptName: "症状" },
          { conceptType: "object_type", conceptId: "drug", conceptName: "药品" },
        ],
        action: "vector",
      }),
    );

  it("vectors of two sizes in one answer are UNAVAILABLE EMBEDDINGS_UNAVAILABLE", async () => {
    embeddings.answerWith((input) =>
      JSON.stringify({ data: input.map((t, index) => ({ index, embedding: goodVector(t, index === 0 ? 8 : 6) })) }),
    );
    const err = await rerank();
    expect(embeddings.inputs.some((i) => i.length > 1)).toBe(true);
    expectRefused(
      err,
      /^the embeddings endpoint returned a vector of 6 dimensions for input 1 where the answer's first vector has 8$/,
    );
  });

  it("two vectors with one index (so another input has none) are UNAVAILABLE EMBEDDINGS_UNAVAILABLE", async () => {
    embeddings.answerWith((input) =>
      JSON.stringify({ data: input.map((t, i) => ({ index: i === 1 ? 0 : i, embedding: goodVector(t) })) }),
    );
    expectRefused(
      await rerank(),
      /^the embeddings endpoint returned two vectors with index 0, so another input has none$/,
    );
  });
});
