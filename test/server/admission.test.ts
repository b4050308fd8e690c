import { type DescMessage, fromBinary } from "@bufbuild/protobuf";
import { Code, ConnectError, createClient } from "@connectrpc/connect";
import { createGrpcTransport } from "@connectrpc/connect-node";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { KnowledgeRetrievalService } from "../../gen/contextloader/knowledge/v1/knowledge_pb";
import { MemRecallService } from "../../gen/contextloader/memrecall/v1/memrecall_pb";
import { ErrorInfoSchema, RetryInfoSchema } from "../../gen/google/rpc/error_details_pb";
import { Health, HealthCheckResponse_ServingStatus } from "../../gen/grpc/health/v1/health_pb";
import { ToolError } from "../../src/errors/tool-error";
import { EmbeddedBackend } from "../../src/kn/embedded/engine";
import { Admission, type AdmissionObserver } from "../../src/server/admission";
import { type Simulator, startSimulator } from "../../src/simulator/simulator";
import { handoffJson } from "../helpers/fixtures";
import { clientWith, failure } from "../helpers/rpc";
import { startServer, type TestServer } from "../helpers/server";

/** An observer that writes down what admission control reports. */
function recorder() {
  const seen = { refused: [] as string[], waited: [] as number[] };
  const observer: AdmissionObserver = {
    refused: (reason) => seen.refused.push(reason),
    waited: (ms) => seen.waited.push(ms),
  };
  return { seen, observer };
}

const never = new AbortController().signal;

describe("admission control", () => {
  it("admits at once up to maxInFlight, then in arrival order as slots come free", async () => {
    const { observer } = recorder();
    const admission = new Admission({ maxInFlight: 2, maxQueued: 10, maxWaitMs: 5000 }, observer);
    const first = await admission.enter(never, "a");
    const second = await admission.enter(never, "a");
    const order: string[] = [];
    const waiting = ["a", "b", "c"].map((name) =>
      admission.enter(never, "a").then((release) => {
        order.push(name);
        return release;
      }),
    );
    const tick = () => new Promise((r) => setTimeout(r, 10));
    expect({ inFlight: admission.inFlight, queued: admission.queued }).toEqual({ inFlight: 2, queued: 3 });
    first();
    first(); // a second release of the same slot frees nothing more
    await tick();
    expect(order).toEqual(["a"]);
    second();
    await tick();
    expect(order).toEqual(["a", "b"]);
    expect({ inFlight: admission.inFlight, queued: admission.queued }).toEqual({ inFlight: 2, queued: 1 });
    (await waiting[0]!)();
    (await waiting[1]!)();
    (await waiting[2]!)();
    expect(order).toEqual(["a", "b", "c"]);
    expect({ inFlight: admission.inFlight, queued: admission.queued }).toEqual({ inFlight: 0, queued: 0 });
  });

  it("gives a slot at once without a promise when one is free and nobody waits, and none otherwise (tryEnter)", async () => {
    const { observer } = recorder();
    const admission = new Admission({ maxInFlight: 1, maxQueued: 10, maxWaitMs: 5000 }, observer);
    const first = admission.tryEnter();
    expect(first).toBeTypeOf("function");
    expect(admission.tryEnter()).toBeUndefined();
    const waiting = admission.enter(never, "a");
    first!();
    // The freed slot goes to the call that waited, not to one arriving after it.
    expect(admission.tryEnter()).toBeUndefined();
    (await waiting)();
    // In the next turn of the event loop (the first call of a turn may start at once).
    await new Promise((r) => setImmediate(r));
    const again = admission.tryEnter();
    expect(admission.inFlight).toBe(1);
    again!();
    expect({ inFlight: admission.inFlight, queued: admission.queued }).toEqual({ inFlight: 0, queued: 0 });
  });

  it("starts calls for at most one slice (5 ms) per turn of the event loop, the rest in later turns, in order", async () => {
    const { observer } = recorder();
    const admission = new Admission({ maxInFlight: 100, maxQueued: 100, maxWaitMs: 5000 }, observer);
    let turn = 0;
    const ticker = setInterval(() => turn++, 1);
    const started: { call: number; turn: number }[] = [];
    const busy = (ms: number) => {
      const until = performance.now() + ms;
      while (performance.now() < until);
    };
    // Each call arrives in its own callback, as requests do, and works 3 ms without yielding, as an embedded-engine call does.
    const calls = Array.from({ length: 6 }, (_, call) =>
      new Promise((r) => setImmediate(r))
        .then(() => admission.enter(never, "a"))
        .then((release) => {
          started.push({ call, turn });
          busy(3);
          release();
        }),
    );
    await Promise.all(calls);
    clearInterval(ticker);
    expect(started.map((s) => s.call)).toEqual([0, 1, 2, 3, 4, 5]);
    // Two calls fit in a slice (3 ms, then 6 > 5): the third waits for the loop to turn.
    for (let i = 2; i < started.length; i++) expect(started[i]!.turn).toBeGreaterThan(started[i - 2]!.turn);
  });

  it("starts only the first of the calls that arrive in one callback at once (an MCP batch), the others one by one in later turns", async () => {
    const { observer } = recorder();
    const admission = new Admission({ maxInFlight: 100, maxQueued: 100, maxWaitMs: 5000 }, observer);
    let turn = 0;
    const ticker = setInterval(() => turn++, 1);
    const started: number[] = [];
    const busy = (ms: number) => {
      const until = performance.now() + ms;
      while (performance.now() < until);
    };
    // Ten calls asking for their slots in one callback, before any has run (each then works 15 ms).
    const calls = await new Promise<Promise<void>[]>((resolve) =>
      setImmediate(() =>
        resolve(
          Array.from({ length: 10 }, () =>
            Promise.resolve(admission.tryEnter() ?? admission.enter(never, "batch")).then((release) => {
              started.push(turn);
              busy(15);
              release();
            }),
          ),
        ),
      ),
    );
    expect(started).toHaveLength(1);
    expect(admission.queued).toBe(9);
    await Promise.all(calls);
    clearInterval(ticker);
    // At most two calls (30 ms) in any one turn: before, all ten ran in the turn that read them (150 ms).
    const perTurn = new Map<number, number>();
    for (const t of started) perTurn.set(t, (perTurn.get(t) ?? 0) + 1);
    expect(Math.max(...perTurn.values())).toBeLessThanOrEqual(2);
  });

  it("refuses at once with RESOURCE_EXHAUSTED OVERLOADED and a time to retry when the queue is full", async () => {
    const { seen, observer } = recorder();
    const admission = new Admission({ maxInFlight: 1, maxQueued: 1, maxWaitMs: 400 }, observer);
    await admission.enter(never, "a");
    const queued = admission.enter(never, "a");
    const err = await admission.enter(never, "a").catch((e: unknown) => e);
    // At once: the call already waiting has not reached its 400 ms yet.
    expect(admission.queued).toBe(1);
    expect(err).toBeInstanceOf(ToolError);
    expect(err).toMatchObject({ code: "resource_exhausted", reason: "OVERLOADED" });
    // About one queue wait, jittered: 400..800 ms.
    expect((err as ToolError).retryAfterMs).toBeGreaterThanOrEqual(400);
    expect((err as ToolError).retryAfterMs).toBeLessThanOrEqual(800);
    expect(seen.refused).toEqual(["queue_full"]);
    await expect(queued).rejects.toMatchObject({ reason: "OVERLOADED" });
  });

  it("takes turns between callers: a caller with many calls waiting delays another's call by one of them", async () => {
    const { observer } = recorder();
    const admission = new Admission({ maxInFlight: 1, maxQueued: 100, maxWaitMs: 5000 }, observer);
    const running = await admission.enter(never, "flood");
    const order: string[] = [];
    const waitFor = (caller: string, n: number) =>
      admission.enter(never, caller).then((release) => {
        order.push(`${caller}${n}`);
        release();
      });
    const calls = [1, 2, 3, 4, 5].map((n) => waitFor("flood", n));
    calls.push(waitFor("other", 1), waitFor("third", 1), waitFor("other", 2));
    running();
    await Promise.all(calls);
    // First come first served within a caller; one call per caller per turn between them.
    expect(order).toEqual(["flood1", "other1", "third1", "flood2", "other2", "flood3", "flood4", "flood5"]);
  });

  it("lets one caller hold at most half of maxQueued waiting, so a flood leaves room for others", async () => {
    const { seen, observer } = recorder();
    const admission = new Admission({ maxInFlight: 1, maxQueued: 4, maxWaitMs: 5000 }, observer);
    const running = await admission.enter(never, "flood");
    const held = [admission.enter(never, "flood"), admission.enter(never, "flood")];
    await expect(admission.enter(never, "flood")).rejects.toMatchObject({ reason: "OVERLOADED" });
    const other = admission.enter(never, "other");
    expect(admission.queued).toBe(3);
    expect(seen.refused).toEqual(["queue_full"]);
    running();
    for (const next of [held[0]!, other, held[1]!]) (await next)();
    expect(admission.inFlight).toBe(0);
  });

  it("refuses a call that waited maxWaitMs, and gives its place to the next", async () => {
    const { seen, observer } = recorder();
    const admission = new Admission({ maxInFlight: 1, maxQueued: 5, maxWaitMs: 100 }, observer);
    const running = await admission.enter(never, "a");
    const started = performance.now();
    await expect(admission.enter(never, "a")).rejects.toMatchObject({
      code: "resource_exhausted",
      reason: "OVERLOADED",
    });
    expect(performance.now() - started).toBeGreaterThanOrEqual(95);
    expect(seen.refused).toEqual(["waited_too_long"]);
    expect(admission.queued).toBe(0);
    const next = admission.enter(never, "a");
    running();
    (await next)();
    expect(seen.waited).toHaveLength(1);
    expect(admission.inFlight).toBe(0);
  });

  it("lets a caller who gives up leave the queue with the caller's reason, keeping the others' order", async () => {
    const { seen, observer } = recorder();
    const admission = new Admission({ maxInFlight: 1, maxQueued: 5, maxWaitMs: 5000 }, observer);
    const running = await admission.enter(never, "a");
    const deadline = new AbortController();
    const gone = admission.enter(deadline.signal, "a");
    const after = admission.enter(never, "a");
    const reason = new ConnectError("the deadline passed", Code.DeadlineExceeded);
    deadline.abort(reason);
    await expect(gone).rejects.toBe(reason);
    expect(admission.queued).toBe(1);
    running();
    (await after)();
    expect(seen.refused).toEqual([]);
    await expect(admission.enter(AbortSignal.abort(reason), "a")).rejects.toBe(reason);
  });
});

/**
 * The real server with room for one call and 300 ms of waiting, reading its
 * networks from a simulator that answers after 1.5 s: one schema recall holds
 * the only slot while the other calls arrive.
 */
describe("admission control on the real server", () => {
  const SLOW_MS = 1500;
  let sim: Simulator;
  let server: TestServer;

  beforeAll(async () => {
    sim = await startSimulator({
      backend: EmbeddedBackend.fromFiles(["data/kn_medical.bundle.json"], { timeZone: "Asia/Shanghai" }),
      faults: { latencyMs: SLOW_MS },
    });
    server = await startServer({
      ONTOLOGY_MANAGER_URL: sim.url,
      ONTOLOGY_QUERY_URL: sim.url,
      ADMISSION_MAX_IN_FLIGHT: "1",
      ADMISSION_MAX_QUEUED: "10",
      ADMISSION_MAX_WAIT_MS: "300",
      LOG_LEVEL: "silent",
    });
  });
  afterAll(async () => {
    await server?.close();
    await sim?.close();
  });

  /** Starts a schema recall that holds the one slot for SLOW_MS; resolves once the server shows it in progress. */
  async function holdTheSlot(): Promise<{ done: Promise<unknown> }> {
    const slow = clientWith(KnowledgeRetrievalService, server.baseUrl, { "x-account-id": "u-adm" }).retrieveSchema({
      query: "肺炎有哪些症状",
      knIds: [{ knowledgeNetworkId: "kn_medical" }],
    });
    for (let i = 0; i < 100 && !(await gauge("contextloader_calls_in_flight")); i++)
      await new Promise((r) => setTimeout(r, 10));
    // Wrapped: an async function returning the promise itself would wait for it.
    return { done: slow };
  }

  async function gauge(name: string): Promise<number> {
    const text = await fetch(`${server.baseUrl}/metrics`).then((r) => r.text());
    return Number(new RegExp(`^${name}(?:\\{[^}]*\\})? (\\S+)$`, "m").exec(text)?.[1] ?? NaN);
  }

  it("answers a Connect call that waited too long 429 RESOURCE_EXHAUSTED with Retry-After and RetryInfo", async () => {
    const slow = await holdTheSlot();
    let slowDone = false;
    void slow.done.then(() => {
      slowDone = true;
    });
    const started = performance.now();
    const res = await fetch(`${server.baseUrl}/contextloader.memrecall.v1.MemRecallService/Handoff`, {
      method: "POST",
      headers: { "content-type": "application/json", "x-account-id": "u-adm" },
      body: JSON.stringify(handoffJson),
    });
    const waited = performance.now() - started;
    const body = (await res.json()) as { code: string; message: string; details: { type: string; value: string }[] };
    expect(res.status).toBe(429);
    // It waited its 300 ms, and was refused while the slow call still held the slot.
    expect(waited).toBeGreaterThanOrEqual(290);
    expect(slowDone).toBe(false);
    expect(body.code).toBe("resource_exhausted");
    const retryAfter = Number(res.headers.get("retry-after"));
    expect(retryAfter).toBeGreaterThanOrEqual(1);
    const detail = <T extends DescMessage>(schema: T) => {
      const found = body.details.find((d) => d.type === schema.typeName);
      return found && fromBinary(schema, Buffer.from(found.value, "base64"));
    };
    expect(detail(ErrorInfoSchema)?.reason).toBe("OVERLOADED");
    const delay = detail(RetryInfoSchema)?.retryDelay;
    const delayMs = Number(delay?.seconds ?? 0) * 1000 + (delay?.nanos ?? 0) / 1e6;
    // About one queue wait, jittered; Retry-After is the same, in whole seconds rounded up.
    expect(delayMs).toBeGreaterThanOrEqual(300);
    expect(retryAfter).toBe(Math.max(1, Math.ceil(delayMs / 1000)));
    await slow.done;
  });

  it("ends a queued gRPC call at its deadline with DEADLINE_EXCEEDED, and refuses one without a deadline with RetryInfo", async () => {
    const slow = await holdTheSlot();
    const grpc = createClient(MemRecallService, createGrpcTransport({ baseUrl: server.baseUrl }));
    const headers = { "x-account-id": "u-adm" };
    const expired = await failure(
      grpc.handoff({ reason: "done", searchSummary: "找到了", confidence: 0.5 }, { headers, timeoutMs: 100 }),
    );
    // Its 100 ms deadline came before the 300 ms the queue allows: the caller's deadline wins.
    expect(expired.code).toBe(Code.DeadlineExceeded);
    const refused = await failure(
      grpc.handoff({ reason: "done", searchSummary: "找到了", confidence: 0.5 }, { headers }),
    );
    expect(refused.code).toBe(Code.ResourceExhausted);
    const [delay] = refused.findDetails(RetryInfoSchema);
    expect(
      Number(delay?.retryDelay?.seconds ?? 0) * 1000 + (delay?.retryDelay?.nanos ?? 0) / 1e6,
    ).toBeGreaterThanOrEqual(300);
    await slow.done;
  });

  it("refuses a JSON route 429 with Retry-After in the route's own error shape", async () => {
    const slow = await holdTheSlot();
    const res = await fetch(`${server.baseUrl}/tools/knowledge_retrieve`, {
      method: "POST",
      headers: { "content-type": "application/json", "x-account-id": "u-adm" },
      body: JSON.stringify({ query: "肺炎", kn_ids: [{ knowledge_network_id: "kn_medical" }] }),
    });
    const body = (await res.json()) as { error: string; status_code: number; detail: Record<string, string> };
    expect(res.status).toBe(429);
    expect(Number(res.headers.get("retry-after"))).toBeGreaterThanOrEqual(1);
    expect(body.status_code).toBe(429);
    expect(body.error).toMatch(/limit of 1 calls in progress/);
    await slow.done;
  });

  it("still answers health checks and probes while every slot is taken, and counts what it refused", async () => {
    const slow = await holdTheSlot();
    let slowDone = false;
    void slow.done.then(() => {
      slowDone = true;
    });
    const health = await createClient(Health, createGrpcTransport({ baseUrl: server.baseUrl })).check({ service: "" });
    const healthz = await fetch(`${server.baseUrl}/healthz`);
    expect(health.status).toBe(HealthCheckResponse_ServingStatus.SERVING);
    expect(healthz.status).toBe(200);
    // Answered while the one slot was still taken: they did not wait for it.
    expect(slowDone).toBe(false);
    expect(await gauge("contextloader_calls_in_flight")).toBe(1);
    const text = await fetch(`${server.baseUrl}/metrics`).then((r) => r.text());
    expect(text).toMatch(/^contextloader_calls_refused_total\{reason="waited_too_long"\} [1-9]/m);
    expect(text).toMatch(/^contextloader_calls_queued 0$/m);
    await slow.done;
    expect(await gauge("contextloader_calls_in_flight")).toBe(0);
  });
});
