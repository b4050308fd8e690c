import { pino } from "pino";
import { type App, createApp } from "./app";
import { type Config, loadConfig } from "./config";
import { ConfigError } from "./config-fields";
import { exitAfterLogs } from "./exit-after-logs";
import { BundleError } from "./kn/embedded/bundle";
import { VocabularyError } from "./knowledge/matching/vocabulary";
import { GlossaryError } from "./memrecall/glossary";
import { stopOnSignals } from "./stop-on-signals";
import { MemoryFileError } from "./store/memories/sqlite-memory-store";
import { RedisSentinelError } from "./store/redis-connection";

/** Log output is written in chunks of about this size... */
const LOG_BUFFER_BYTES = 8192;
/** ...or at least this often. */
const LOG_FLUSH_MS = 1000;
/** The longest an exit waits for the buffered lines to be written (a stalled reader, a starved machine). */
const LOG_EXIT_WAIT_MS = 2000;

function main(): void {
  let config: Config;
  try {
    config = loadConfig(process.env);
  } catch (err) {
    if (err instanceof ConfigError) {
      process.stderr.write(`context-loader cannot start: ${err.message}\n`);
      process.exit(2);
    }
    throw err;
  }
  // Lines go out in writes of LOG_BUFFER_BYTES from a background thread of libuv: a write per line took
  // a sixth of a small call's time. A quiet service still shows its lines within LOG_FLUSH_MS, and each
  // exit writes what is left first (exitAfterLogs; a crash that kills the process at once loses them).
  const destination = pino.destination({ dest: 1, sync: false, minLength: LOG_BUFFER_BYTES });
  setInterval(() => destination.flush(), LOG_FLUSH_MS).unref();
  // pino writes a destination's buffer synchronously after each fatal line (flushSync), a write retried for
  // ever when the log reader stopped reading or went away (exit-after-logs.ts). Given only `write`, it
  // leaves fatal lines to the exit's flush, as every other line.
  const log = pino(
    { level: config.logLevel, base: { service: "context-loader" } },
    { write: (line: string) => destination.write(line) },
  );
  const exit = exitAfterLogs(destination, LOG_EXIT_WAIT_MS);
  process.on("unhandledRejection", (reason) => {
    log.fatal({ err: reason }, "unhandled promise rejection");
    exit(1);
  });
  // Node's own exit on an uncaught exception would leave the buffered lines to pino's exit hook, which
  // hangs the process when the log reader stopped reading or went away (exit-after-logs.ts): a crash
  // must end the process, so the orchestrator restarts it.
  process.on("uncaughtException", (err) => {
    log.fatal({ err }, "uncaught exception");
    exit(1);
  });

  let app: App;
  try {
    app = createApp(config, log);
  } catch (err) {
    if (
      err instanceof BundleError ||
      err instanceof VocabularyError ||
      err instanceof GlossaryError ||
      err instanceof MemoryFileError
    ) {
      process.stderr.write(`context-loader cannot start: ${err.message}\n`);
      // What createApp logged before it failed is still buffered: written by the exit, within its bound.
      exit(2);
      return;
    }
    throw err;
  }
  stopOnSignals(log, () => app.shutdown(), exit);

  app.listen().then(
    // Whoever waits for the "listening" line need not wait for the next flush.
    () => destination.flush(),
    (err: unknown) => {
      // The SQLite file opened but refused the schema or the start-up write (read-only, immutable, disk full),
      // or no sentinel of REDIS_SENTINELS could say where the master is.
      if (err instanceof MemoryFileError || err instanceof RedisSentinelError) {
        process.stderr.write(`context-loader cannot start: ${err.message}\n`);
        exit(2);
        return;
      }
      const code = (err as NodeJS.ErrnoException).code;
      if (code === "EADDRINUSE" || code === "EACCES" || code === "EADDRNOTAVAIL") {
        // A setting to change, not a crash: one line saying which, as for a bad setting.
        process.stderr.write(`context-loader cannot start: ${listenProblem(code, config.server)}\n`);
        exit(2);
        return;
      }
      log.fatal({ err }, "cannot listen");
      exit(1);
    },
  );
}

/** What to change when the port cannot be bound. */
function listenProblem(code: string, server: Config["server"]): string {
  const where = `${server.host}:${server.port}`;
  if (code === "EADDRINUSE") return `${where} is already in use; stop what listens there or set PORT to another port`;
  if (code === "EACCES") return `no permission to listen on ${where}; use a port above 1023 (PORT)`;
  return `${server.host} is not an address of this machine; set HOST to one (127.0.0.1, or 0.0.0.0 for every interface)`;
}

main();
