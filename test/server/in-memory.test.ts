import { randomUUID } from "node:crypto";
import { Code, ConnectError } from "@connectrpc/connect";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { AgentHintSchema } from "../../gen/contextloader/common/v1/errors_pb";
import { KnowledgeRetrievalService } from "../../gen/contextloader/knowledge/v1/knowledge_pb";
import { MemRecallService } from "../../gen/contextloader/memrecall/v1/memrecall_pb";
import { BadRequestSchema, ErrorInfoSchema } from "../../gen/google/rpc/error_details_pb";
import { Health, HealthCheckResponse_ServingStatus as Status } from "../../gen/grpc/health/v1/health_pb";
import { type InMemoryService, inMemoryService } from "../helpers/in-memory";
import { failure } from "../helpers/rpc";

// routes(deps) behind createRouterTransport: the handlers, validation, interceptor and
// error mapping with no port and no HTTP, so behaviour can be checked in milliseconds.
let service: InMemoryService;
beforeAll(async () => {
  service = await inMemoryService();
});
afterAll(() => service.close());

const KN = [{ knowledgeNetworkId: "kn_medical" }];

describe("the service in memory (createRouterTransport over routes(deps))", () => {
  it("recalls the schema and then 上、下气道梗阻 for the keyword 上气道梗阻", async () => {
    const knowledge = service.client(KnowledgeRetrievalService, { "x-account-id": "u-mem" });
    const sessionId = randomUUID();
    const schema = await knowledge.retrieveSchema({
      query: "上气道梗阻有哪些症状",
      knIds: KN,
      sessionId,
      compactFormat: false,
    });
    expect(schema.relationTypes.map((r) => r.conceptId)).toContain("has_symptom");
    const context = await knowledge.retrieveKeywordContext({
      query: "上气道梗阻",
      knIds: KN,
      sessionId,
      objectTypeId: "disease",
      compactFormat: false,
    });
    expect(context.keywordContext!.instances[0]).toMatchObject({
      instanceId: "disease_004790",
      instanceName: "上、下气道梗阻",
    });
    expect(context.keywordContext!.instances[0]!.neighbors.some((n) => n.relationTypeId === "has_symptom")).toBe(true);
  });

  it("maps a domain refusal to its code with ErrorInfo and the next step: keyword context before schema recall", async () => {
    const knowledge = service.client(KnowledgeRetrievalService, { "x-account-id": "u-mem" });
    const err = await failure(
      knowledge.retrieveKeywordContext({ query: "肺炎", sessionId: randomUUID(), objectTypeId: "disease" }),
    );
    expect(err.code).toBe(Code.FailedPrecondition);
    expect(err.findDetails(ErrorInfoSchema)[0]?.reason).toBe("SCHEMA_NOT_IN_SESSION");
    expect(err.findDetails(AgentHintSchema)[0]?.nextRpc).toBe(
      "contextloader.knowledge.v1.KnowledgeRetrievalService/RetrieveSchema",
    );
  });

  it("validates requests: a schema recall without kn_ids is INVALID_ARGUMENT naming the field", async () => {
    const err = await failure(service.client(KnowledgeRetrievalService).retrieveSchema({ query: "肺炎" }));
    expect(err.code).toBe(Code.InvalidArgument);
    expect(err.findDetails(BadRequestSchema)[0]?.fieldViolations.map((v) => v.field)).toEqual(["kn_ids"]);
  });

  it("reads the caller from the headers: MemRecall stores and finds a memory for its account only", async () => {
    const mine = service.client(MemRecallService, { "x-account-id": "u-mem-a" });
    const theirs = service.client(MemRecallService, { "x-account-id": "u-mem-b" });
    await mine.storeMemory({
      memoryKey: "db-config",
      memoryType: "config",
      summary: "订单库的数据库配置",
      content: "host db-orders, port 5432",
    });
    const found = await mine.searchMemories({ query: "数据库配置", searchMode: "keyword" });
    expect(found.results.map((r) => r.memoryKey)).toEqual(["db-config"]);
    expect((await theirs.searchMemories({ query: "数据库配置", searchMode: "keyword" })).results).toEqual([]);
    const anonymous = await failure(service.client(MemRecallService).searchMemories({ query: "数据库配置" }));
    expect(anonymous.code).toBe(Code.Unauthenticated);
  });

  it("answers health checks from the same HealthState the app shuts down", async () => {
    const health = service.client(Health);
    expect((await health.check({ service: "contextloader.memrecall.v1.MemRecallService" })).status).toBe(
      Status.SERVING,
    );
    const err = await health.check({ service: "no.such.Service" }).catch((e: unknown) => ConnectError.from(e));
    expect((err as ConnectError).code).toBe(Code.NotFound);
  });
});
