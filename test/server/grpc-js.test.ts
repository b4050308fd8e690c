import { fileURLToPath } from "node:url";
import { createRegistry, fromBinary, isMessage } from "@bufbuild/protobuf";
import { anyUnpack } from "@bufbuild/protobuf/wkt";
import * as grpc from "@grpc/grpc-js";
import * as protoLoader from "@grpc/proto-loader";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { AgentHintSchema } from "../../gen/contextloader/common/v1/errors_pb";
import { BadRequestSchema, ErrorInfoSchema } from "../../gen/google/rpc/error_details_pb";
import { StatusSchema } from "../../gen/google/rpc/status_pb";
import { expectedHandoffReport, handoffJson } from "../helpers/fixtures";
import { startServer, type TestServer } from "../helpers/server";

// A polyglot caller on another stack: @grpc/grpc-js with messages described by
// @grpc/proto-loader from the same .proto files, nothing from gen/ on the wire.
// gen/ is only used to read google.rpc.Status out of the error trailer, as a
// caller would with its own protobuf runtime.

const protoDir = fileURLToPath(new URL("../../proto", import.meta.url));

/** A unary method of a grpc-js dynamic client, in its (request, metadata, callback) form. */
type UnaryMethod = (
  request: object,
  metadata: grpc.Metadata,
  callback: (err: grpc.ServiceError | null, response?: unknown) => void,
) => grpc.ClientUnaryCall;

/** A grpc-js dynamic client for `service`, loaded from `protoFile` in proto/. */
function loadClient(protoFile: string, service: string, address: string): grpc.Client {
  const definition = protoLoader.loadSync(protoFile, {
    includeDirs: [protoDir],
    keepCase: true,
    longs: String,
    enums: String,
    defaults: false,
    oneofs: true,
  });
  const root = grpc.loadPackageDefinition(definition);
  const Client = service
    .split(".")
    .reduce<unknown>((node, part) => (node as grpc.GrpcObject)[part], root) as grpc.ServiceClientConstructor;
  return new Client(address, grpc.credentials.createInsecure());
}

/** The caller's identity as gRPC metadata: every MemRecall call needs an account. */
function accountMetadata(): grpc.Metadata {
  const metadata = new grpc.Metadata();
  metadata.set("x-account-id", "u-1");
  return metadata;
}

let server: TestServer;
let memrecall: grpc.Client;
let knowledge: grpc.Client;

beforeAll(async () => {
  server = await startServer();
  const address = `127.0.0.1:${server.port}`;
  memrecall = loadClient(
    "contextloader/memrecall/v1/memrecall.proto",
    "contextloader.memrecall.v1.MemRecallService",
    address,
  );
  knowledge = loadClient(
    "contextloader/knowledge/v1/knowledge.proto",
    "contextloader.knowledge.v1.KnowledgeRetrievalService",
    address,
  );
});
afterAll(async () => {
  memrecall?.close();
  knowledge?.close();
  await server?.close();
});

function call<Res>(client: grpc.Client, method: string, request: object, metadata = new grpc.Metadata()): Promise<Res> {
  const fn = (client as unknown as Record<string, UnaryMethod>)[method];
  if (!fn) throw new Error(`the loaded service has no method ${method}`);
  return new Promise((resolve, reject) => {
    fn.call(client, request, metadata, (err, response) => (err ? reject(err) : resolve(response as Res)));
  });
}

function callFailing(
  client: grpc.Client,
  method: string,
  request: object,
  metadata?: grpc.Metadata,
): Promise<grpc.ServiceError> {
  return call(client, method, request, metadata).then(
    (response) => {
      throw new Error(`${method} answered ${JSON.stringify(response)} instead of failing`);
    },
    (err: grpc.ServiceError) => err,
  );
}

/** The google.rpc.Status in the `grpc-status-details-bin` trailer, with its details unpacked. */
function statusOf(err: grpc.ServiceError) {
  const [bytes] = err.metadata.get("grpc-status-details-bin");
  if (!(bytes instanceof Buffer)) throw new Error("the error carries no grpc-status-details-bin trailer");
  const status = fromBinary(StatusSchema, bytes);
  const registry = createRegistry(ErrorInfoSchema, BadRequestSchema, AgentHintSchema);
  const details = status.details.map((any) => anyUnpack(any, registry));
  return {
    status,
    errorInfo: details.find((d) => d !== undefined && isMessage(d, ErrorInfoSchema)),
    badRequest: details.find((d) => d !== undefined && isMessage(d, BadRequestSchema)),
    agentHint: details.find((d) => d !== undefined && isMessage(d, AgentHintSchema)),
  };
}

describe("a @grpc/grpc-js client built from the .proto files", () => {
  it("gets the same Handoff report as the connect clients, with snake_case fields", async () => {
    const res = await call(memrecall, "Handoff", handoffJson, accountMetadata());
    expect(res).toEqual({ success: true, message: expectedHandoffReport, task_completed: true });
  });

  it("gets INVALID_ARGUMENT for an invalid ExpandContextWindow, with ErrorInfo, BadRequest and AgentHint in grpc-status-details-bin", async () => {
    const err = await callFailing(
      memrecall,
      "ExpandContextWindow",
      { reason: "需要更早的对话", current_size: 10, requested_size: 5 },
      accountMetadata(),
    );
    expect(err.code).toBe(grpc.status.INVALID_ARGUMENT);

    const { status, errorInfo, badRequest, agentHint } = statusOf(err);
    expect(status.code).toBe(grpc.status.INVALID_ARGUMENT);
    expect(status.message).toBe("invalid request: requested_size: 5 must be greater than current_size (10)");
    expect(badRequest?.fieldViolations.map((v) => v.field)).toEqual(["requested_size"]);
    expect(errorInfo?.domain).toBe("contextloader");
    expect(errorInfo?.reason).toBe("INVALID_ARGUMENT");
    expect(agentHint?.message).not.toBe("");

    // The trace id the server sends as metadata is the one ErrorInfo names, so a
    // caller can quote either to find the server's log line.
    const [traceId] = err.metadata.get("x-trace-id");
    expect(traceId).toMatch(/^[0-9a-f]{32}$/);
    expect(errorInfo?.metadata["trace_id"]).toBe(traceId);
  });

  it("gets FAILED_PRECONDITION naming the setting for RerankConcepts by LLM on a service without one", async () => {
    const err = await callFailing(knowledge, "RerankConcepts", {
      query_understanding: { origin_query: "药品", processed_query: "药品" },
      concepts: [{ concept_type: "object_type", concept_id: "drug", concept_name: "药品" }],
      action: "llm",
    });
    expect(err.code).toBe(grpc.status.FAILED_PRECONDITION);
    const { status, errorInfo } = statusOf(err);
    expect(status.message).toContain("(LLM_BASE_URL is not set)");
    expect(errorInfo?.reason).toBe("LLM_NOT_CONFIGURED");
    // grpc-js decodes grpc-message with decodeURI: the server encodes it as the
    // gRPC spec says, so ":", "/" and "#" arrive readable.
    expect(err.details).toBe(status.message);
  });
});
