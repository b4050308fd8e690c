/**
 * The bare connect-node server of the unary bench, as a process of its own:
 * MemRecallService.Handoff over node:http2 (h2c) with connectNodeAdapter and
 * nothing of ours around it — no one-port listener, authentication,
 * interceptors, admission control, log line or metrics — running the same
 * handler as the service (decode, validate, handoff, encode) and giving the
 * same reply. Listens on a free loopback port and prints {"port": n} on stdout.
 */
import * as http2 from "node:http2";
import type { AddressInfo } from "node:net";
import { type ConnectRouter, createContextValues } from "@connectrpc/connect";
import { connectNodeAdapter } from "@connectrpc/connect-node";
import { pino } from "pino";
import { HandoffRequestSchema, MemRecallService } from "../../gen/contextloader/memrecall/v1/memrecall_pb";
import { validateRequest } from "../../src/errors/validation";
import { handoffResponse } from "../../src/memrecall/encode";
import { handoff } from "../../src/memrecall/handoff";
import { handoffInput } from "../../src/memrecall/inputs";

const log = pino({ level: "silent" });

const routes = (router: ConnectRouter) =>
  router.service(MemRecallService, {
    handoff(req, ctx) {
      const input = validateRequest(HandoffRequestSchema, req, handoffInput);
      const callCtx = {
        caller: { accountId: ctx.requestHeader.get("x-account-id") ?? "", accountType: "user" as const },
        traceId: "bench",
        language: "en" as const,
        log,
        signal: ctx.signal,
        remainingMs: () => ctx.timeoutMs(),
      };
      return handoffResponse(handoff(callCtx, input));
    },
  });

const server = http2.createServer(connectNodeAdapter({ routes, contextValues: () => createContextValues() }));
server.listen(0, "127.0.0.1", () => {
  process.stdout.write(`${JSON.stringify({ port: (server.address() as AddressInfo).port })}\n`);
});
// SIGTERM ends it with exit code 0, so --cpu-prof writes its profile.
process.once("SIGTERM", () => {
  server.close();
  process.exit(0);
});
