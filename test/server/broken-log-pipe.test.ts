import { afterEach, describe, expect, it } from "vitest";
import { sleep } from "../helpers/load";
import { type ServiceProcess, startServiceProcess } from "../helpers/service-process";

/**
 * The service's log lines go to stdout, buffered (src/main.ts). When whatever
 * reads them goes away (a log shipper that died, `| head`), the pipe breaks:
 * the service must still stop on SIGTERM, within its shutdown grace, and not
 * hang in a write retried for ever (sonic-boom retries a synchronous write
 * that fails with EPIPE; pino's exit hook makes one).
 */
const GRACE_MS = 1000;
/** Grace, the log flush's bound and a start-up's worth of slack on a busy two-core machine. */
const EXIT_WITHIN_MS = 8000;

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
});
