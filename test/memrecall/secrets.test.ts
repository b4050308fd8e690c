import { randomUUID } from "node:crypto";
import { Code } from "@connectrpc/connect";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { MemRecallService } from "../../gen/contextloader/memrecall/v1/memrecall_pb";
import { BadRequestSchema } from "../../gen/google/rpc/error_details_pb";
import { clientWith, failure } from "../helpers/rpc";
import { startServer, type TestServer } from "../helpers/server";

/**
 * Issue 31: the secrets an attacker's test saw RememberConversation keep in
 * plain sight — an AWS secret access key in the summary and keywords of a
 * sensitive memory, and passwords and keys stated in words in non-sensitive
 * ones. Each is kept only as a sensitive memory's content: not in its
 * summary, keywords, the answer or the log, and not found by a search from a
 * caller without the sensitive scope. StoreMemory, which stores what the
 * caller wrote, refuses a credential where such a caller would see it.
 */

const AWS_ID = "AKIAZ7QW3ERT5YUI2OPL";
const AWS_SECRET = "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";

const account = () => `u-secrets-${randomUUID().slice(0, 8)}`;
const user = (content: string) => ({ role: "user", content });
/** Everything an answer says, as text (int64 as strings). */
const textOf = (v: unknown) => JSON.stringify(v, (_k, x) => (typeof x === "bigint" ? String(x) : x));

let server: TestServer;
beforeAll(async () => {
  server = await startServer();
});
afterAll(() => server.close());

const clientFor = (owner: string, scopes = "") =>
  clientWith(MemRecallService, server.baseUrl, {
    "x-account-id": owner,
    ...(scopes ? { "x-account-scopes": scopes } : {}),
  });

describe("RememberConversation keeps a secret only as a sensitive memory's content", () => {
  const cases: [string, string, string[]][] = [
    [
      "an AWS secret access key stated beside its access key id",
      `记住：CI 的 AWS 凭据，access key ${AWS_ID}，secret key ${AWS_SECRET}`,
      [AWS_ID, AWS_SECRET],
    ],
    [
      "an AWS secret access key on the id's line, named by nothing",
      `remember the backup creds: ${AWS_ID} / ${AWS_SECRET}`,
      [AWS_ID, AWS_SECRET],
    ],
    ["a database password stated in English", "remember that the staging db pass is tangerinesky", ["tangerinesky"]],
    ["Redis's requirepass stated in Chinese", "记住：redis 的 requirepass 设置为 Xk9#mq2Lp", ["Xk9#mq2Lp"]],
    ["an API key stated in English", "remember: my api key is 7d1f0c9e4b2a8f63", ["7d1f0c9e4b2a8f63"]],
    ["a root password after its name, with nothing between", "记一下：服务器 root 登录密码 Qw3rty!88", ["Qw3rty!88"]],
    ["an API key stated without asking to remember it", "fyi my api key is 5be0a7c3d91f42e6", ["5be0a7c3d91f42e6"]],
    ["a password with a few words of Chinese before its colon", "测试库的密码发你一下：Hz7#vQ2mLp", ["Hz7#vQ2mLp"]],
    [
      "a key the scanner does not know, beside a token it does",
      "记住：CI 用 ghp_Zx9Kq2Lm4Np6Rs8Tu0Vw2Xy4Za6Bc8De0Fg，备用的是 9f8e7d6c5b4a3f2e1d0c",
      ["ghp_Zx9Kq2Lm4Np6Rs8Tu0Vw2Xy4Za6Bc8De0Fg", "9f8e7d6c5b4a3f2e1d0c"],
    ],
  ];

  for (const [what, message, secrets] of cases) {
    it(what, async () => {
      const owner = account();
      const c = clientFor(owner);
      const r = await c.rememberConversation({ messages: [user(message)], mode: "rules" });
      expect(r.applied).toBe(true);
      expect(r.operations.length).toBeGreaterThan(0);
      const shown = await clientFor(owner, "memories:sensitive").getMemoryDetail({
        memoryKey: r.operations[0]!.memoryKey,
      });
      for (const secret of secrets) {
        expect(textOf(r)).not.toContain(secret);
        // Every memory holding it is sensitive, and one holds it.
        for (const op of r.operations) {
          const m = await clientFor(owner, "memories:sensitive").getMemoryDetail({ memoryKey: op.memoryKey });
          if (m.content.includes(secret)) expect(op.sensitive).toBe(true);
        }
        expect(shown.content).toContain(secret);
        for (const op of r.operations) {
          const withheld = await c.getMemoryDetail({ memoryKey: op.memoryKey });
          expect(textOf(withheld)).not.toContain(secret);
          expect(withheld.keywords.map((k) => k.keyword).join(" ")).not.toContain(secret.toLowerCase().slice(0, 8));
        }
        const found = await c.searchMemories({ query: secret, minRelevanceScore: 0 });
        expect(textOf(found)).not.toContain(secret);
        expect(found.results).toEqual([]);
        expect(JSON.stringify(server.logs)).not.toContain(secret);
      }
      expect(shown).toMatchObject({ sensitive: true, redacted: false });
    });
  }
});

describe("StoreMemory refuses a credential where a caller without the sensitive scope would see it", () => {
  const cases: [string, Record<string, unknown>, string, RegExp][] = [
    [
      "a password in the content of a memory not marked sensitive",
      { memoryKey: "db", summary: "测试库", content: "the staging db pass is tangerinesky" },
      "sensitive",
      /^must be true: the content holds a password/,
    ],
    [
      "an AWS secret access key in a sensitive memory's summary",
      {
        memoryKey: "aws",
        summary: `CI 的 AWS 凭据 ${AWS_ID} ${AWS_SECRET}`,
        content: `access key ${AWS_ID}, secret key ${AWS_SECRET}`,
        sensitive: true,
      },
      "summary",
      /every caller sees and searches the summary/,
    ],
    [
      "a token as a keyword",
      {
        memoryKey: "gh",
        summary: "CI 的 GitHub token",
        content: "token ghp_Zx9Kq2Lm4Np6Rs8Tu0Vw2Xy4Za6Bc8De0Fg",
        keywords: [{ keyword: "ghp_Zx9Kq2Lm4Np6Rs8Tu0Vw2Xy4Za6Bc8De0Fg", weight: 1 }],
        sensitive: true,
      },
      "keywords[0]",
      /^holds a token or key/,
    ],
  ];
  for (const [what, request, field, description] of cases) {
    it(`${what}: INVALID_ARGUMENT on ${field}, nothing stored`, async () => {
      const owner = account();
      const err = await failure(clientFor(owner).storeMemory(request));
      expect(err.code).toBe(Code.InvalidArgument);
      const violations = err.findDetails(BadRequestSchema).flatMap((b) => b.fieldViolations);
      expect(violations.find((v) => v.field === field)?.description).toMatch(description);
      const err2 = await failure(
        clientFor(owner, "memories:sensitive").getMemoryDetail({ memoryKey: request["memoryKey"] as string }),
      );
      expect(err2.code).toBe(Code.NotFound);
    });
  }

  it("the same credential stored as sensitive with a summary without it is stored, and found only by its summary", async () => {
    const owner = account();
    const c = clientFor(owner);
    const stored = await c.storeMemory({
      memoryKey: "aws",
      summary: "CI 的 AWS 凭据",
      content: `access key ${AWS_ID}, secret key ${AWS_SECRET}`,
      sensitive: true,
    });
    expect(stored.sensitive).toBe(true);
    expect((await c.searchMemories({ query: AWS_SECRET, minRelevanceScore: 0 })).results).toEqual([]);
    expect((await c.searchMemories({ query: "AWS 凭据", minRelevanceScore: 0 })).results[0]).toMatchObject({
      memoryKey: "aws",
      redacted: true,
      contentPreview: "",
    });
  });

  it("a phone number in a memory not marked sensitive is the caller's to judge: stored", async () => {
    const c = clientFor(account());
    const stored = await c.storeMemory({ memoryKey: "oncall", summary: "值班电话", content: "值班电话 13800138000" });
    expect(stored.sensitive).toBe(false);
  });
});
