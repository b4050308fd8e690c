import { type CallOptions, type Client, Code, ConnectError } from "@connectrpc/connect";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { AgentHintSchema } from "../../gen/contextloader/common/v1/errors_pb";
import { MemRecallService } from "../../gen/contextloader/memrecall/v1/memrecall_pb";
import { BadRequestSchema, ErrorInfoSchema } from "../../gen/google/rpc/error_details_pb";
import { clientsFor } from "../helpers/clients";
import { expectedHandoffReport, handoffInit } from "../helpers/fixtures";
import { startServer, type TestServer } from "../helpers/server";

/** Every MemRecall call needs the caller's account. */
const account: CallOptions = { headers: { "x-account-id": "u-1" } };

/** Every MemRecallService RPC, called with an empty (for most RPCs invalid) request. */
const memrecallCalls: [string, (client: Client<typeof MemRecallService>, options: CallOptions) => Promise<unknown>][] =
  [
    ["SearchMemories", (c, o) => c.searchMemories({}, o)],
    ["GetMemoryDetail", (c, o) => c.getMemoryDetail({}, o)],
    ["ExtractSearchKeywords", (c, o) => c.extractSearchKeywords({}, o)],
    ["ExpandContextWindow", (c, o) => c.expandContextWindow({}, o)],
    ["Handoff", (c, o) => c.handoff({}, o)],
    ["ListTools", (c, o) => c.listTools({}, o)],
    ["StoreMemory", (c, o) => c.storeMemory({}, o)],
    ["DeleteMemory", (c, o) => c.deleteMemory({}, o)],
  ];

let server: TestServer;
beforeAll(async () => {
  server = await startServer();
});
afterAll(() => server.close());

describe("every connect-node protocol on the one port", () => {
  it("answers Handoff the same in every protocol", async () => {
    const answers = [];
    for (const [name, client] of clientsFor(MemRecallService, server.baseUrl)) {
      const res = await client.handoff(handoffInit, account);
      answers.push([name, res.message, res.success, res.taskCompleted]);
    }
    for (const [name, message, success, done] of answers) {
      expect({ name, message, success, done }).toEqual({
        name,
        message: expectedHandoffReport,
        success: true,
        done: true,
      });
    }
  });

  it("rejects an invalid ExpandContextWindow with INVALID_ARGUMENT and a BadRequest violation in every protocol", async () => {
    for (const [name, client] of clientsFor(MemRecallService, server.baseUrl)) {
      const err = await client
        .expandContextWindow({ reason: "需要更早的对话", currentSize: 10, requestedSize: 5 }, account)
        .then(
          () => undefined,
          (e: unknown) => ConnectError.from(e),
        );
      expect(err, name).toBeDefined();
      expect(err!.code, name).toBe(Code.InvalidArgument);
      const [badRequest] = err!.findDetails(BadRequestSchema);
      expect(badRequest?.fieldViolations, name).toEqual([
        expect.objectContaining({
          field: "requested_size",
          description: "5 must be greater than current_size (10)",
        }),
      ]);
      const [info] = err!.findDetails(ErrorInfoSchema);
      expect(info?.domain, name).toBe("contextloader");
      expect(info?.reason, name).toBe("INVALID_ARGUMENT");
      expect(info?.metadata["trace_id"], name).toMatch(/^[0-9a-f]{32}$/);
      expect(err!.findDetails(AgentHintSchema)[0]?.message, name).not.toBe("");
    }
  });

  it("refuses every MemRecall call without x-account-id (UNAUTHENTICATED) or from an anonymous account (PERMISSION_DENIED), before validating the request, in every protocol", async () => {
    const cases = [
      { who: "no x-account-id", options: {}, code: Code.Unauthenticated, reason: "ACCOUNT_REQUIRED" },
      {
        who: "x-account-type anonymous",
        options: { headers: { "x-account-id": "u-1", "x-account-type": "anonymous" } },
        code: Code.PermissionDenied,
        reason: "ANONYMOUS_NOT_ALLOWED",
      },
    ];
    for (const [protocol, client] of clientsFor(MemRecallService, server.baseUrl)) {
      for (const [rpc, call] of memrecallCalls) {
        for (const { who, options, code, reason } of cases) {
          const name = `${rpc} over ${protocol}, ${who}`;
          const err = await call(client, options).then(
            () => undefined,
            (e: unknown) => ConnectError.from(e),
          );
          expect(err, name).toBeDefined();
          expect(err!.code, name).toBe(code);
          const [info] = err!.findDetails(ErrorInfoSchema);
          expect(info?.domain, name).toBe("contextloader");
          expect(info?.reason, name).toBe(reason);
          expect(info?.metadata["trace_id"], name).toMatch(/^[0-9a-f]{32}$/);
          // The account is checked first: an invalid request gets no BadRequest.
          expect(err!.findDetails(BadRequestSchema), name).toEqual([]);
          expect(err!.findDetails(AgentHintSchema)[0]?.message, name).toContain("x-account-id");
        }
      }
    }
  });
});
