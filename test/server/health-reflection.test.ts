import { create, createFileRegistry, fromBinary } from "@bufbuild/protobuf";
import { anyUnpack, FileDescriptorProtoSchema } from "@bufbuild/protobuf/wkt";
import { Code, ConnectError, createClient } from "@connectrpc/connect";
import { createGrpcTransport } from "@connectrpc/connect-node";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { MemRecallService } from "../../gen/contextloader/memrecall/v1/memrecall_pb";
import { StatusSchema } from "../../gen/google/rpc/status_pb";
import { Health, HealthCheckResponse_ServingStatus as Status } from "../../gen/grpc/health/v1/health_pb";
import {
  ServerReflection,
  type ServerReflectionRequest,
  ServerReflectionRequestSchema,
  type ServerReflectionResponse,
} from "../../gen/grpc/reflection/v1/reflection_pb";
import { ServerReflection as ServerReflectionV1Alpha } from "../../gen/grpc/reflection/v1alpha/reflection_pb";
import { startServer, type TestServer } from "../helpers/server";

let server: TestServer;
beforeAll(async () => {
  server = await startServer();
});
afterAll(() => server.close());

const productServices = [
  "contextloader.knowledge.v1.KnowledgeRetrievalService",
  "contextloader.kntools.v1.KnowledgeToolsService",
  "contextloader.resolver.v1.LogicPropertyResolverService",
  "contextloader.memrecall.v1.MemRecallService",
];

/** Sends reflection requests on one stream and collects the answers. */
async function reflect(
  requests: ServerReflectionRequest["messageRequest"][],
  service: typeof ServerReflection | typeof ServerReflectionV1Alpha = ServerReflection,
): Promise<ServerReflectionResponse[]> {
  const client = createClient(service as typeof ServerReflection, createGrpcTransport({ baseUrl: server.baseUrl }));
  async function* input() {
    for (const messageRequest of requests) yield create(ServerReflectionRequestSchema, { host: "", messageRequest });
  }
  const out: ServerReflectionResponse[] = [];
  for await (const res of client.serverReflectionInfo(input())) out.push(res as ServerReflectionResponse);
  return out;
}

function descriptorFiles(res: ServerReflectionResponse): string[] {
  if (res.messageResponse.case !== "fileDescriptorResponse")
    throw new Error(`not a file answer: ${res.messageResponse.case}`);
  return res.messageResponse.value.fileDescriptorProto.map((b) => fromBinary(FileDescriptorProtoSchema, b).name);
}

describe("grpc.health.v1.Health", () => {
  it("reports SERVING for the server and each product service, NOT_FOUND for an unknown one", async () => {
    const health = createClient(Health, createGrpcTransport({ baseUrl: server.baseUrl }));
    expect((await health.check({ service: "" })).status).toBe(Status.SERVING);
    for (const name of productServices) expect((await health.check({ service: name })).status).toBe(Status.SERVING);
    const err = await health.check({ service: "nope.v1.Nope" }).catch((e: unknown) => ConnectError.from(e));
    expect(err).toBeInstanceOf(ConnectError);
    expect((err as ConnectError).code).toBe(Code.NotFound);
  });

  it("lists every status", async () => {
    const health = createClient(Health, createGrpcTransport({ baseUrl: server.baseUrl }));
    const { statuses } = await health.list({});
    expect(Object.keys(statuses).sort()).toEqual(["", ...productServices].sort());
    expect(Object.values(statuses).every((s) => s.status === Status.SERVING)).toBe(true);
  });

  it("streams the current status on Watch and SERVICE_UNKNOWN for an unknown service", async () => {
    const health = createClient(Health, createGrpcTransport({ baseUrl: server.baseUrl }));
    // Leaving a for-await does not cancel a connect-es call; aborting its signal does.
    const firstStatus = async (service: string) => {
      const controller = new AbortController();
      try {
        for await (const res of health.watch({ service }, { signal: controller.signal })) {
          controller.abort();
          return res.status;
        }
      } catch (err) {
        if (ConnectError.from(err).code !== Code.Canceled) throw err;
      }
      return undefined;
    };
    expect(await firstStatus("")).toBe(Status.SERVING);
    expect(await firstStatus("nope.v1.Nope")).toBe(Status.SERVICE_UNKNOWN);
  });
});

describe("server reflection", () => {
  it("lists the product services, health and both reflection versions", async () => {
    for (const version of [ServerReflection, ServerReflectionV1Alpha]) {
      const [res] = await reflect([{ case: "listServices", value: "" }], version);
      expect(res?.messageResponse.case).toBe("listServicesResponse");
      const names =
        res?.messageResponse.case === "listServicesResponse"
          ? res.messageResponse.value.service.map((s) => s.name)
          : [];
      expect(names.sort()).toEqual(
        [
          ...productServices,
          "grpc.health.v1.Health",
          "grpc.reflection.v1.ServerReflection",
          "grpc.reflection.v1alpha.ServerReflection",
        ].sort(),
      );
    }
  });

  it("describes every service with its dependencies, each file once per stream", async () => {
    const answers = await reflect([
      { case: "fileContainingSymbol", value: "contextloader.memrecall.v1.MemRecallService" },
      { case: "fileContainingSymbol", value: "contextloader.knowledge.v1.KnowledgeRetrievalService.RetrieveSchema" },
      { case: "fileContainingSymbol", value: "contextloader.resolver.v1.LogicPropertyResolverService" },
    ]);
    const [memrecall, knowledge, resolver] = answers.map(descriptorFiles);
    expect(memrecall).toEqual([
      "contextloader/memrecall/v1/memrecall.proto",
      "google/protobuf/struct.proto",
      "google/protobuf/timestamp.proto",
    ]);
    // struct.proto went out with the first answer on this stream, so it is not repeated.
    expect(knowledge).toEqual(["contextloader/knowledge/v1/knowledge.proto"]);
    expect(resolver).toEqual(["contextloader/resolver/v1/resolver.proto"]);
  });

  it("serves the comments written in proto/, so grpcurl describe documents every field", async () => {
    const [res] = await reflect([{ case: "fileByFilename", value: "contextloader/memrecall/v1/memrecall.proto" }]);
    if (res?.messageResponse.case !== "fileDescriptorResponse") throw new Error("no file answer");
    const file = fromBinary(FileDescriptorProtoSchema, res.messageResponse.value.fileDescriptorProto[0]!);
    const comments = file.sourceCodeInfo?.location.map((l) => l.leadingComments) ?? [];
    expect(comments.some((c) => c.includes("Required. Why the task ends"))).toBe(true);
  });

  it("serves the error-detail types, so a client with reflection alone can decode error details", async () => {
    const answers = await reflect([
      { case: "fileContainingSymbol", value: "google.rpc.BadRequest" },
      { case: "fileContainingSymbol", value: "contextloader.common.v1.AgentHint" },
      { case: "fileContainingSymbol", value: "contextloader.resolver.v1.MissingParams" },
      { case: "fileByFilename", value: "google/rpc/status.proto" },
    ]);
    const protos = answers.flatMap((res) =>
      res.messageResponse.case === "fileDescriptorResponse"
        ? res.messageResponse.value.fileDescriptorProto.map((b) => fromBinary(FileDescriptorProtoSchema, b))
        : [],
    );
    // A registry built only from what reflection returned (files come before their
    // dependencies, as grpc-go sends them, so each is resolved by name).
    const byName = new Map(protos.map((p) => [p.name, p]));
    const registry = createFileRegistry(...protos.map((p) => createFileRegistry(p, (name) => byName.get(name))));
    const client = createClient(MemRecallService, createGrpcTransport({ baseUrl: server.baseUrl }));
    const err = await client
      .expandContextWindow({ reason: "x", currentSize: 3, requestedSize: 2 }, { headers: { "x-account-id": "u-1" } })
      .catch((e: unknown) => ConnectError.from(e));
    expect(err).toBeInstanceOf(ConnectError);
    const statusBytes = (err as ConnectError).metadata.get("grpc-status-details-bin");
    expect(statusBytes).toBeTruthy();
    const status = fromBinary(StatusSchema, Buffer.from(statusBytes!, "base64"));
    const typeNames = status.details.map((any) => anyUnpack(any, registry)?.$typeName);
    expect(typeNames).toEqual(["google.rpc.ErrorInfo", "google.rpc.BadRequest", "contextloader.common.v1.AgentHint"]);
  });

  it("answers NOT_FOUND inside the stream for an unknown symbol or file", async () => {
    const answers = await reflect([
      { case: "fileContainingSymbol", value: "no.such.Symbol" },
      { case: "fileByFilename", value: "no/such.proto" },
    ]);
    for (const res of answers) {
      expect(res.messageResponse.case).toBe("errorResponse");
      if (res.messageResponse.case === "errorResponse") expect(res.messageResponse.value.errorCode).toBe(Code.NotFound);
    }
  });
});
