import * as http2 from "node:http2";
import type { AddressInfo } from "node:net";
import { type ConnectRouter, createContextValues } from "@connectrpc/connect";
import { connectNodeAdapter } from "@connectrpc/connect-node";
import * as grpc from "@grpc/grpc-js";
import * as protoLoader from "@grpc/proto-loader";
import { pino } from "pino";
import { HandoffRequestSchema, MemRecallService } from "../gen/contextloader/memrecall/v1/memrecall_pb";
import { createApp } from "../src/app";
import { loadConfig } from "../src/config";
import { validateRequest } from "../src/errors/validation";
import { handoffResponse } from "../src/memrecall/encode";
import { handoff } from "../src/memrecall/handoff";
import { handoffInput } from "../src/memrecall/inputs";
import { line } from "./stats";

const CONCURRENCY = 32;
const SECONDS = 4;
const REQUEST = { reason: "已找到相关记忆，搜索完成", search_summary: "找到用户之前的数据库配置", confidence: 0.85 };

/**
 * Handoff over gRPC (@grpc/grpc-js, 32 calls in flight) against the service
 * and against a bare connect-node server running the same handler (decode,
 * validate, handoff, encode) with nothing of ours around it: what our one-port
 * listener, RPC handler, interceptors (trace, identity, log line, metrics) and
 * admission control cost per call. Both in this process, one after the other,
 * logs written as the service writes them (to /dev/null).
 */
export async function benchUnary(): Promise<void> {
  const log = pino({ level: "info" }, pino.destination({ dest: "/dev/null", sync: false, minLength: 8192 }));
  const app = createApp(loadConfig({ PORT: "0", HOST: "127.0.0.1", SQLITE_PATH: ":memory:", LOG_LEVEL: "info" }), log);
  const ours = await app.listen();
  const bare = await startBare();
  try {
    const rate = async (port: number) => {
      await callsPerSecond(port, 1); // warm-up
      return callsPerSecond(port, SECONDS);
    };
    const oursRate = await rate(ours);
    const bareRate = await rate(bare.port);
    line("unary: Handoff over gRPC, bare connect-node", `${bareRate.toFixed(0)} calls/s`);
    line("unary: Handoff over gRPC, the service", `${oursRate.toFixed(0)} calls/s`);
    line("unary: the service / bare connect-node", `${(oursRate / bareRate).toFixed(2)}x`);
  } finally {
    await app.shutdown();
    await bare.close();
  }
}

async function startBare(): Promise<{ port: number; close(): Promise<void> }> {
  const log = pino({ level: "silent" });
  const routes = (router: ConnectRouter) =>
    router.service(MemRecallService, {
      handoff(req, ctx) {
        const input = validateRequest(HandoffRequestSchema, req, handoffInput);
        const callCtx = {
          caller: { accountId: ctx.requestHeader.get("x-account-id") ?? "", accountType: "user" as const },
          traceId: "bench",
          log,
          signal: ctx.signal,
          remainingMs: () => ctx.timeoutMs(),
        };
        return handoffResponse(handoff(callCtx, input));
      },
    });
  const server = http2.createServer(connectNodeAdapter({ routes, contextValues: () => createContextValues() }));
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return {
    port: (server.address() as AddressInfo).port,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

/** Handoff calls completed per second with CONCURRENCY in flight from one grpc-js channel. */
async function callsPerSecond(port: number, seconds: number): Promise<number> {
  const definition = protoLoader.loadSync("contextloader/memrecall/v1/memrecall.proto", {
    includeDirs: ["proto"],
    keepCase: true,
  });
  const Client = (
    grpc.loadPackageDefinition(definition) as unknown as {
      contextloader: { memrecall: { v1: { MemRecallService: grpc.ServiceClientConstructor } } };
    }
  ).contextloader.memrecall.v1.MemRecallService;
  const client = new Client(`127.0.0.1:${port}`, grpc.credentials.createInsecure());
  const metadata = new grpc.Metadata();
  metadata.set("x-account-id", "bench");
  const one = () =>
    new Promise<void>((resolve, reject) =>
      (client["handoff"] as grpc.requestCallback<unknown> & ((...a: unknown[]) => void))(
        REQUEST,
        metadata,
        (err: grpc.ServiceError | null) => (err ? reject(err) : resolve()),
      ),
    );
  const until = Date.now() + seconds * 1000;
  let done = 0;
  const started = performance.now();
  await Promise.all(
    Array.from({ length: CONCURRENCY }, async () => {
      while (Date.now() < until) {
        await one();
        done++;
      }
    }),
  );
  const rate = done / ((performance.now() - started) / 1000);
  client.close();
  return rate;
}
