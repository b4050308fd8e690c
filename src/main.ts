import { pino } from "pino";
import { type App, createApp } from "./app";
import { type Config, loadConfig } from "./config";
import { ConfigError } from "./config-fields";
import { BundleError } from "./kn/embedded/bundle";
import { VocabularyError } from "./knowledge/matching/vocabulary";
import { stopOnSignals } from "./stop-on-signals";

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
  // Written from a background thread of libuv, lines that come while a write is under way going out
  // together with the next: a write per line on the event loop took a sixth of a small call's time.
  // pino flushes what is left when the process exits.
  const log = pino(
    { level: config.logLevel, base: { service: "context-loader" } },
    pino.destination({ dest: 1, sync: false }),
  );
  process.on("unhandledRejection", (reason) => {
    log.fatal({ err: reason }, "unhandled promise rejection");
    process.exit(1);
  });

  let app: App;
  try {
    app = createApp(config, log);
  } catch (err) {
    if (err instanceof BundleError || err instanceof VocabularyError) {
      process.stderr.write(`context-loader cannot start: ${err.message}\n`);
      process.exit(2);
    }
    throw err;
  }
  stopOnSignals(log, () => app.shutdown());

  app.listen().catch((err: unknown) => {
    log.fatal({ err }, "cannot listen");
    process.exit(1);
  });
}

main();
