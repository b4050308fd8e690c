import { fileURLToPath } from "node:url";
import { afterEach, describe, expect, it } from "vitest";
import { sleep } from "../helpers/load";
import { type ServiceProcess, startServiceProcess } from "../helpers/service-process";

/**
 * The service's log lines go to stdout, buffered (src/main.ts). When whatever
 * reads them goes away (a log shipper that died, `| head`), the pipe breaks;
 * when it stops reading (a shipper that hangs), the pipe fills. Either way the
 * service must still stop on SIGTERM, within its shutdown grace and its wait
 * for the log lines, and not hang in a write retried for ever (sonic-boom
 * retries a synchronous write that fails with EPIPE or EAGAIN; pino's exit
 * hook makes one). The same holds when it ends on an uncaught exception.
 */
const GRACE_MS = 1000;
/** Grace, the log flush's bound (2 s) and a start-up's worth of slack on a busy two-core machine. */
const EXIT_WITHIN_MS = 10_000;
/** Log output well beyond what a pipe (64 KiB) and the reader's buffer hold. */
const CALLS = 1500;

let service: ServiceProcess | undefined;
afterEach(async () => {
  await service?.destroy();
  service = undefined;
});

/** Resolves with the exit code, or "still running" after `ms`. */
const exitWithin = (s: ServiceProcess, ms: number) =>
  Promise.race([s.exited, sleep(ms).then(() => "still running" as const)]);

describe("a service whose log reader closed the pipe", () => {
  it.each(["SIGTERM", "SIGINT"] as const)("stops on %s, with exit code 0", async (signal) => {
    service = await startServiceProcess({ SHUTDOWN_GRACE_MS: String(GRACE_MS) });
    service.closeOutput();
    // What it logs from here on ("signal received", "stopped") sits in the buffer the exit must write.
    expect((await fetch(`${service.baseUrl}/healthz`)).status).toBe(200);
    service.signal(signal);
    expect(await exitWithin(service, EXIT_WITHIN_MS)).toBe(0);
  });

  it("stops on a second signal too (1 when it cut the graceful stop short, 0 when that had ended)", async () => {
    service = await startServiceProcess({ SHUTDOWN_GRACE_MS: String(GRACE_MS) });
    service.closeOutput();
    service.signal("SIGTERM");
    service.signal("SIGTERM");
    expect([0, 1]).toContain(await exitWithin(service, EXIT_WITHIN_MS));
  });

  // Some 1,500 calls through a starved service: slow on a loaded machine, so a longer time than the default 30 s.
  it("stops on SIGTERM when the reader stopped reading and the pipe is full, dropping what it cannot write", {
    timeout: 120_000,
  }, async () => {
    service = await startServiceProcess({ SHUTDOWN_GRACE_MS: String(GRACE_MS) });
    const before = service.lines.length;
    await fillThePipe(service);
    service.signal("SIGTERM");
    expect(await exitWithin(service, EXIT_WITHIN_MS)).toBe(0);
    // What the pipe held is still there to read; what it could not take was dropped at the exit's deadline.
    await service.readOutputToEnd();
    const rpcLines = service.lines.slice(before).filter((line) => line["msg"] === "rpc");
    expect(rpcLines.length).toBeGreaterThan(0);
    expect(rpcLines.length).toBeLessThan(CALLS);
  });
});

describe("a service that meets an uncaught exception (a bug)", () => {
  const bug = { NODE_OPTIONS: `--import ${fileURLToPath(new URL("../fixtures/bug-on-sigusr2.mjs", import.meta.url))}` };

  it("exits 1 and logs it, as fatal with the error", async () => {
    service = await startServiceProcess(bug);
    service.signal("SIGUSR2");
    expect(await exitWithin(service, EXIT_WITHIN_MS)).toBe(1);
    await service.readOutputToEnd();
    const fatal = service.lines.find((line) => line["msg"] === "uncaught exception");
    expect(fatal?.["level"]).toBe(60);
    expect(JSON.stringify(fatal?.["err"])).toContain("a bug, thrown on SIGUSR2 by the test");
  });

  it("exits 1 when the reader stopped reading and the pipe is full", { timeout: 120_000 }, async () => {
    service = await startServiceProcess(bug);
    await fillThePipe(service);
    service.signal("SIGUSR2");
    expect(await exitWithin(service, EXIT_WITHIN_MS)).toBe(1);
  });
});

/**
 * Stops reading the service's output and makes calls until far more log
 * lines ("rpc", one a call) were written than the pipe holds, so its writes wait.
 */
async function fillThePipe(s: ServiceProcess): Promise<void> {
  s.pauseOutput();
  const queue = Array.from({ length: CALLS }, (_, i) => i);
  const worker = async () => {
    for (let i = queue.shift(); i !== undefined; i = queue.shift()) {
      const res = await fetch(`${s.baseUrl}/contextloader.memrecall.v1.MemRecallService/SearchMemories`, {
        method: "POST",
        headers: { "content-type": "application/json", "x-account-id": "u-stalled-reader" },
        body: JSON.stringify({ query: `stalled ${i}`, searchMode: "keyword" }),
      });
      expect(res.status).toBe(200);
    }
  };
  await Promise.all(Array.from({ length: 8 }, worker));
}
