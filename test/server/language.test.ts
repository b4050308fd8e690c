import { randomUUID } from "node:crypto";
import { Code, ConnectError, createClient } from "@connectrpc/connect";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { AgentHintSchema } from "../../gen/contextloader/common/v1/errors_pb";
import { KnowledgeRetrievalService } from "../../gen/contextloader/knowledge/v1/knowledge_pb";
import { BadRequestSchema, ErrorInfoSchema } from "../../gen/google/rpc/error_details_pb";
import { loadConfig } from "../../src/config";
import { chooseLanguage } from "../../src/server/language";
import { transports } from "../helpers/clients";
import { startServer, type TestServer } from "../helpers/server";

const CJK = /[\u3400-\u9fff]/;

async function failure(p: Promise<unknown>): Promise<ConnectError> {
  try {
    await p;
  } catch (err) {
    return ConnectError.from(err);
  }
  throw new Error("the call succeeded");
}

describe("chooseLanguage", () => {
  it("takes the language header first, then Accept-Language by preference, then the default", () => {
    expect(chooseLanguage("en", "zh-CN", "zh")).toBe("en");
    expect(chooseLanguage("zh-TW", undefined, "en")).toBe("zh");
    expect(chooseLanguage(undefined, "zh-CN,zh;q=0.9,en;q=0.8", "en")).toBe("zh");
    expect(chooseLanguage(undefined, "fr-FR, en-GB;q=0.7, zh;q=0.5", "zh")).toBe("en");
    expect(chooseLanguage(undefined, "en;q=0.2, zh;q=0.8", "en")).toBe("zh");
    expect(chooseLanguage(undefined, "en;q=0, zh;q=0.1", "en")).toBe("zh");
    expect(chooseLanguage(undefined, "fr, de", "en")).toBe("en");
    expect(chooseLanguage(undefined, "*", "zh")).toBe("zh");
    expect(chooseLanguage(undefined, "", "en")).toBe("en");
    expect(chooseLanguage(undefined, "en;q=abc, zh", "en")).toBe("zh");
    // Set on the channel and on the call, gRPC sends one value joined by commas: the first counts.
    expect(chooseLanguage("en, en", undefined, "zh")).toBe("en");
    expect(chooseLanguage("zh,en", undefined, "en")).toBe("zh");
  });

  it("reads a bounded number of ranges from a huge header", () => {
    const header = `${"fr;q=0.9,".repeat(100_000)}zh`;
    expect(chooseLanguage(undefined, header, "en")).toBe("en");
  });

  it("defaults to Chinese, the platform agents' language, when DEFAULT_LANGUAGE is unset", () => {
    expect(loadConfig({}).server.defaultLanguage).toBe("zh");
    expect(loadConfig({ DEFAULT_LANGUAGE: "en" }).server.defaultLanguage).toBe("en");
    expect(() => loadConfig({ DEFAULT_LANGUAGE: "fr" })).toThrow(/DEFAULT_LANGUAGE/);
  });
});

describe("one language per answer, on every transport", () => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startServer({ DEFAULT_LANGUAGE: "zh" });
  });
  afterAll(() => server.close());

  /** The words of one refused call: message, hint, each violation's description. */
  async function wordsOf(transport: string, headers: Record<string, string>) {
    const client = createClient(KnowledgeRetrievalService, transports(server.baseUrl)[transport]!);
    const err = await failure(
      client.retrieveKeywordContext(
        { query: "上气道梗阻", objectTypeId: "", sessionId: "" },
        { headers: { "x-account-id": "u-lang", ...headers } },
      ),
    );
    return {
      err,
      words: [
        err.rawMessage,
        err.findDetails(AgentHintSchema)[0]?.message ?? "",
        ...(err.findDetails(BadRequestSchema)[0]?.fieldViolations.map((v) => v.description) ?? []),
      ],
    };
  }

  for (const transport of Object.keys(transports("http://x"))) {
    it(`${transport}: English for Accept-Language en, Chinese for zh and by default, the same structure`, async () => {
      const en = await wordsOf(transport, { "accept-language": "en-US,en;q=0.9" });
      const zh = await wordsOf(transport, { "accept-language": "zh-CN" });
      const byDefault = await wordsOf(transport, {});
      const byMetadata = await wordsOf(transport, { language: "en" });
      for (const w of [...en.words, ...byMetadata.words]) expect(w).not.toMatch(CJK);
      for (const w of [...zh.words, ...byDefault.words]) expect(w).toMatch(CJK);
      expect(en.words.length).toBeGreaterThanOrEqual(3);
      for (const r of [en, zh, byDefault, byMetadata]) {
        expect(r.err.code).toBe(Code.InvalidArgument);
        expect(r.err.findDetails(ErrorInfoSchema)[0]?.reason).toBe("SESSION_ID_REQUIRED");
        expect(r.err.findDetails(BadRequestSchema)[0]?.fieldViolations.map((v) => v.field)).toEqual(["session_id"]);
      }
      expect(zh.err.rawMessage).toBe("session_id参数必须提供，用于存储和检索schema信息");
    });
  }

  it("zod's own messages come in the caller's language too", async () => {
    const client = createClient(KnowledgeRetrievalService, transports(server.baseUrl)["connect+json over HTTP/1.1"]!);
    const call = (language: string) =>
      failure(
        client.retrieveSchema(
          { query: "x".repeat(100_000), sessionId: randomUUID() },
          { headers: { "x-account-id": "u-lang", "accept-language": language } },
        ),
      );
    const en = (await call("en")).findDetails(BadRequestSchema)[0]?.fieldViolations ?? [];
    const zh = (await call("zh")).findDetails(BadRequestSchema)[0]?.fieldViolations ?? [];
    expect(en.length).toBeGreaterThan(0);
    expect(en.map((v) => v.field)).toEqual(zh.map((v) => v.field));
    for (const v of en) expect(v.description).not.toMatch(CJK);
    for (const v of zh) expect(v.description).toMatch(CJK);
  });

  it("refuses a language header it cannot honour, naming the header and the values", async () => {
    const client = createClient(KnowledgeRetrievalService, transports(server.baseUrl)["grpc over h2c"]!);
    const err = await failure(
      client.retrieveSchema(
        { query: "q", sessionId: randomUUID() },
        { headers: { "x-account-id": "u", language: "fr" } },
      ),
    );
    expect(err.code).toBe(Code.InvalidArgument);
    expect(err.findDetails(ErrorInfoSchema)[0]?.reason).toBe("UNSUPPORTED_LANGUAGE");
    expect(err.findDetails(BadRequestSchema)[0]?.fieldViolations[0]?.field).toBe("language");
    expect(err.findDetails(AgentHintSchema)[0]?.validValues).toEqual(["en", "zh"]);
  });

  it("refuses a 4,000-character language header without echoing it", async () => {
    const client = createClient(KnowledgeRetrievalService, transports(server.baseUrl)["connect+json over HTTP/1.1"]!);
    const long = "x".repeat(4000);
    const err = await failure(
      client.retrieveSchema(
        { query: "q", sessionId: randomUUID() },
        { headers: { "x-account-id": "u", language: long } },
      ),
    );
    expect(err.findDetails(ErrorInfoSchema)[0]?.reason).toBe("UNSUPPORTED_LANGUAGE");
    expect(err.rawMessage.length).toBeLessThan(200);
  });

  it("answers a repeated language header by its first value, and refuses a bad one before the body's own problem", async () => {
    const client = createClient(KnowledgeRetrievalService, transports(server.baseUrl)["grpc over h2c"]!);
    const repeated = await failure(
      client.retrieveSchema(
        { query: "q", sessionId: randomUUID() },
        { headers: { "x-account-id": "u", language: "en, en" } },
      ),
    );
    expect(repeated.findDetails(ErrorInfoSchema)[0]?.reason).toBe("INVALID_ARGUMENT");
    expect(repeated.rawMessage).not.toMatch(CJK);
    const res = await fetch(`${server.baseUrl}/contextloader.knowledge.v1.KnowledgeRetrievalService/RetrieveSchema`, {
      method: "POST",
      headers: { "content-type": "application/json", "x-account-id": "u", language: "fr" },
      body: JSON.stringify({ query: "q", top_k: "five" }),
    });
    expect(res.status).toBe(400);
    const body = (await res.json()) as { details: { debug: { reason?: string } }[] };
    expect(body.details[0]?.debug.reason).toBe("UNSUPPORTED_LANGUAGE");
  });

  it("REST and MCP answer in the caller's language as well", async () => {
    const rest = async (language: string) => {
      const res = await fetch(`${server.baseUrl}/tools/knowledge_retrieve`, {
        method: "POST",
        headers: { "content-type": "application/json", "x-account-id": "u-lang", "accept-language": language },
        body: JSON.stringify({ query: "上气道梗阻", enable_keyword_context: true }),
      });
      return (await res.json()) as { error: string };
    };
    expect((await rest("en")).error).not.toMatch(CJK);
    expect((await rest("zh")).error).toMatch(CJK);

    const mcp = async (language: string) => {
      const res = await fetch(`${server.baseUrl}/mcp`, {
        method: "POST",
        headers: {
          "content-type": "application/json",
          accept: "application/json, text/event-stream",
          "x-account-id": "u-lang",
          "accept-language": language,
        },
        body: JSON.stringify({
          jsonrpc: "2.0",
          id: 1,
          method: "tools/call",
          params: { name: "retrieve_keyword_context", arguments: { query: "上气道梗阻" } },
        }),
      });
      const body = (await res.json()) as { result: { isError: boolean; content: { text: string }[] } };
      expect(body.result.isError).toBe(true);
      return body.result.content[0]!.text;
    };
    const en = await mcp("en");
    const zh = await mcp("zh");
    expect(en).not.toMatch(CJK);
    expect(en).toContain("Invalid arguments:");
    expect(zh).toMatch(CJK);
    expect(zh).toContain("无效参数：");
  });
});
