import { Code } from "@connectrpc/connect";
import { afterEach, describe, expect, it } from "vitest";
import { MemRecallService } from "../../gen/contextloader/memrecall/v1/memrecall_pb";
import { Health, HealthCheckResponse_ServingStatus } from "../../gen/grpc/health/v1/health_pb";
import { failure } from "../helpers/rpc";
import { startServer, type TestServer } from "../helpers/server";
import { rpcClients } from "./auth-helpers";

/**
 * AUTH_MODE=headers, the default: the identity headers are the caller, as
 * before; bound beyond loopback the service says at start-up that anyone who
 * reaches the port may claim any account.
 */

let server: TestServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

const WARNING = /identity headers|x-account-id, x-account-type and x-account-scopes are trusted from anyone/;
const warnings = (s: TestServer) => s.logs.filter((l) => l.level === 40 && WARNING.test(String(l.msg)));

describe("AUTH_MODE=headers", () => {
  it("warns at start-up when bound to every interface (0.0.0.0)", async () => {
    server = await startServer({ HOST: "0.0.0.0" });
    expect(warnings(server)).toHaveLength(1);
    expect(warnings(server)[0]).toMatchObject({ auth_mode: "headers", host: "0.0.0.0" });
  });

  it("does not warn bound to loopback, and says which mode it runs", async () => {
    server = await startServer({ HOST: "127.0.0.1" });
    expect(warnings(server)).toHaveLength(0);
    expect(server.logs.find((l) => l.msg === "caller authentication")).toMatchObject({ auth_mode: "headers" });
  });

  it("takes the caller from the identity headers, refuses unusable ones, and never asks probes for them", async () => {
    server = await startServer();
    const [, alice] = rpcClients(MemRecallService, server.baseUrl, { "x-account-id": "alice-h" })[0]!;
    await alice.storeMemory({ memoryKey: "k", content: "alice's" });
    expect((await alice.getMemoryDetail({ memoryKey: "k" })).content).toBe("alice's");
    const [, bob] = rpcClients(MemRecallService, server.baseUrl, { "x-account-id": "bob-h" })[1]!;
    expect((await failure(bob.getMemoryDetail({ memoryKey: "k" }))).code).toBe(Code.NotFound);
    const bad = { "x-account-id": "alice-h", "x-account-type": "robot" };
    const [, odd] = rpcClients(MemRecallService, server.baseUrl, bad)[0]!;
    expect((await failure(odd.getMemoryDetail({ memoryKey: "k" }))).code).toBe(Code.InvalidArgument);
    for (const [name, health] of rpcClients(Health, server.baseUrl, bad)) {
      expect((await health.check({ service: "" })).status, name).toBe(HealthCheckResponse_ServingStatus.SERVING);
    }
  });
});
