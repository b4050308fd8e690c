import { randomBytes } from "node:crypto";
import { fileURLToPath } from "node:url";
import * as grpc from "@grpc/grpc-js";
import * as protoLoader from "@grpc/proto-loader";

/** Calls in flight at once from one client. */
export const CONCURRENCY = 32;
/** Each call's deadline: a server that stops answering ends the round instead of hanging it. */
const CALL_DEADLINE_MS = 5_000;
const REQUEST = { reason: "已找到相关记忆，搜索完成", search_summary: "找到用户之前的数据库配置", confidence: 0.85 };
const protoDir = fileURLToPath(new URL("../../proto", import.meta.url));

type HandoffMethod = (
  req: object,
  md: grpc.Metadata,
  opts: grpc.CallOptions,
  cb: (err: grpc.ServiceError | null) => void,
) => void;

/**
 * A grpc-js channel to one server, calling MemRecallService.Handoff with
 * CONCURRENCY calls in flight, each with x-account-id and a sampled traceparent.
 */
export interface HandoffClient {
  /** Keeps CONCURRENCY calls in flight for `ms`; resolves with the calls answered OK. Rejects on the first error. */
  run(ms: number): Promise<number>;
  close(): void;
}

export function handoffClient(port: number): HandoffClient {
  const definition = protoLoader.loadSync("contextloader/memrecall/v1/memrecall.proto", {
    includeDirs: [protoDir],
    keepCase: true,
  });
  const Client = (
    grpc.loadPackageDefinition(definition) as unknown as {
      contextloader: { memrecall: { v1: { MemRecallService: grpc.ServiceClientConstructor } } };
    }
  ).contextloader.memrecall.v1.MemRecallService;
  const client = new Client(`127.0.0.1:${port}`, grpc.credentials.createInsecure());
  const handoff = (client["handoff"] as HandoffMethod).bind(client);
  const metadata = new grpc.Metadata();
  metadata.set("x-account-id", "bench");
  // Every call continues a caller's sampled trace, as a traced caller's would: the traced service
  // exports a span per call, the others read (the service) or ignore (bare) the header.
  metadata.set("traceparent", `00-${randomBytes(16).toString("hex")}-${randomBytes(8).toString("hex")}-01`);
  const one = () =>
    new Promise<void>((resolve, reject) =>
      handoff(REQUEST, metadata, { deadline: Date.now() + CALL_DEADLINE_MS }, (err) => (err ? reject(err) : resolve())),
    );
  return {
    async run(ms) {
      const until = Date.now() + ms;
      let done = 0;
      await Promise.all(
        Array.from({ length: CONCURRENCY }, async () => {
          while (Date.now() < until) {
            await one();
            done++;
          }
        }),
      );
      return done;
    },
    close: () => client.close(),
  };
}
