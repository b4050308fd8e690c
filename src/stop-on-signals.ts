import type { Logger } from "pino";

/**
 * Ends the program on SIGTERM or SIGINT: logs the signal, runs `stop` (a
 * graceful shutdown), then exits 0, or 1 when `stop` fails. A second signal
 * exits 1 at once without waiting for `stop`: an operator who presses Ctrl-C
 * twice, or an orchestrator that escalates, means it. `exit` ends the
 * process; the service's (exit-after-logs.ts) writes the buffered log
 * lines first and counts only its first call.
 */
export function stopOnSignals(
  log: Logger,
  stop: () => Promise<void>,
  exit: (code: number) => void = (code) => process.exit(code),
): void {
  let signals = 0;
  const onSignal = (signal: NodeJS.Signals) => {
    signals += 1;
    if (signals > 1) {
      log.warn({ signal }, "second signal: exiting without waiting");
      exit(1);
      return;
    }
    log.info({ signal }, "signal received");
    stop().then(
      () => exit(0),
      (err: unknown) => {
        log.error({ err }, "shutdown failed");
        exit(1);
      },
    );
  };
  process.on("SIGTERM", onSignal);
  process.on("SIGINT", onSignal);
}
