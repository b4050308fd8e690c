import { randomUUID } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { MemRecallService } from "../../gen/contextloader/memrecall/v1/memrecall_pb";
import { clientWith } from "../helpers/rpc";
import { startServer, type TestServer } from "../helpers/server";

/**
 * Issue 31: the secrets an attacker's test saw RememberConversation keep in
 * plain sight — an AWS secret access key in the summary and keywords of a
 * sensitive memory, and passwords and keys stated in words in non-sensitive
 * ones. Each is kept only as a sensitive memory's content: not in its
 * summary, keywords, the answer or the log, and not found by a search from a
 * caller without the sensitive scope.
 */

const AWS_ID = "AKIAZ7QW3ERT5YUI2OPL";
const AWS_SECRET = "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";

const account = () => `u-secrets-${randomUUID().slice(0, 8)}`;
const user = (content: string) => ({ role: "user", content });
/** Everything an answer says, as text (int64 as strings). */
const textOf = (v: unknown) => JSON.stringify(v, (_k, x) => (typeof x === "bigint" ? String(x) : x));

describe("RememberConversation keeps a secret only as a sensitive memory's content", () => {
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
