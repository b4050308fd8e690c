import { fileURLToPath } from "node:url";
import * as grpc from "@grpc/grpc-js";
import * as protoLoader from "@grpc/proto-loader";
import { ACCOUNTS, CALL_TIMEOUT_MS, type CallFn, MIX, type RpcName } from "./workload";

/**
 * Connect JSON over HTTP/1.1 keep-alive with Node's fetch, as the issue's
 * clients called: an answer's code is "ok" or the Connect error's code; a call
 * without an answer within CALL_TIMEOUT_MS is "no answer".
 */
export function connectJsonCaller(baseUrl: string): CallFn {
  return async (rpc, body, accountId) => {
    try {
      const res = await fetch(`${baseUrl}/${MIX[rpc]}`, {
        method: "POST",
        headers: { "content-type": "application/json", "x-account-id": accountId },
        body: JSON.stringify(body),
        signal: AbortSignal.timeout(CALL_TIMEOUT_MS),
      });
      const answer = (await res.json()) as { code?: string };
      if (res.status === 200) return { code: "ok" };
      const retryAfter = res.headers.get("retry-after");
      return {
        code: answer.code ?? `http ${res.status}`,
        ...(retryAfter === null ? {} : { retryAfterMs: Number(retryAfter) * 1000 }),
      };
    } catch (err) {
      const name = (err as Error).name;
      return { code: name === "TimeoutError" ? "no answer" : `client error: ${(err as Error).message}` };
    }
  };
}

const protoDir = fileURLToPath(new URL("../../proto", import.meta.url));

/**
 * gRPC through @grpc/grpc-js with messages from the .proto files
 * (@grpc/proto-loader, snake_case fields): one channel per account, each on its
 * own connection, every call with a CALL_TIMEOUT_MS deadline.
 */
export function grpcJsCaller(address: string): { call: CallFn; close(): void } {
  const definition = protoLoader.loadSync(
    ["contextloader/knowledge/v1/knowledge.proto", "contextloader/memrecall/v1/memrecall.proto"],
    { includeDirs: [protoDir], keepCase: true, longs: String, enums: String, defaults: false, oneofs: true },
  );
  const root = grpc.loadPackageDefinition(definition);
  const ctor = (name: string) =>
    name
      .split(".")
      .reduce<unknown>((node, part) => (node as grpc.GrpcObject)[part], root) as grpc.ServiceClientConstructor;
  const options = { "grpc.use_local_subchannel_pool": 1 };
  const channels = Array.from({ length: ACCOUNTS }, () => ({
    knowledge: new (ctor("contextloader.knowledge.v1.KnowledgeRetrievalService"))(
      address,
      grpc.credentials.createInsecure(),
      options,
    ),
    memrecall: new (ctor("contextloader.memrecall.v1.MemRecallService"))(
      address,
      grpc.credentials.createInsecure(),
      options,
    ),
  }));
  const call: CallFn = (rpc: RpcName, body, accountId) => {
    const [service, method] = MIX[rpc].split("/") as [string, string];
    const account = Number(accountId.slice(accountId.lastIndexOf("-") + 1));
    const channel = channels[account % ACCOUNTS]!;
    const client = service.endsWith("MemRecallService") ? channel.memrecall : channel.knowledge;
    const metadata = new grpc.Metadata();
    metadata.set("x-account-id", accountId);
    const fn = client[method.charAt(0).toLowerCase() + method.slice(1)] as (
      req: object,
      md: grpc.Metadata,
      opts: grpc.CallOptions,
      cb: (err: grpc.ServiceError | null) => void,
    ) => void;
    return new Promise((resolve) => {
      fn.call(client, body, metadata, { deadline: Date.now() + CALL_TIMEOUT_MS }, (err) => {
        if (!err) return resolve({ code: "ok" });
        // The only deadline is the client's own (CALL_TIMEOUT_MS): past it, the call had no answer.
        if (err.code === grpc.status.DEADLINE_EXCEEDED) return resolve({ code: "no answer" });
        const retryAfter = err.metadata.get("retry-after")[0];
        resolve({
          code: codeName(err.code),
          ...(retryAfter === undefined ? {} : { retryAfterMs: Number(retryAfter) * 1000 }),
        });
      });
    });
  };
  return {
    call,
    close() {
      for (const c of channels) {
        c.knowledge.close();
        c.memrecall.close();
      }
    },
  };
}

/** "resource_exhausted" for 8: the names Connect uses, so both transports report alike. */
function codeName(code: grpc.status): string {
  return (grpc.status[code] ?? `code ${code}`).toLowerCase();
}
