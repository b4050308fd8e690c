import { pino } from "pino";
import { createApp } from "./app";
import { loadConfig } from "./config";
import { ConfigError } from "./config-fields";
import { BundleError } from "./kn/embedded/bundle";

function main(): void {
  let config;
  try {
    config = loadConfig(process.env);
  } catch (err) {
    if (err instanceof ConfigError) {
      process.stderr.write(`context-loader cannot start: ${err.message}\n`);
      process.exit(2);
    }
    throw err;
  }
  const log = pino({ level: config.logLevel, base: { service: "context-loader" } });
  process.on("unhandledRejection", (reason) => {
    log.fatal({ err: reason }, "unhandled promise rejection");
    process.exit(1);
  });

  let app;
  try {
    app = createApp(config, log);
  } catch (err) {
    if (err instanceof BundleError) {
      process.stderr.write(`context-loader cannot start: ${err.message}\n`);
      process.exit(2);
    }
    throw err;
  }
  let signals = 0;
  const stop = (signal: NodeJS.Signals) => {
    signals += 1;
    if (signals > 1) {
      log.warn({ signal }, "second signal: exiting without waiting");
      process.exit(1);
    }
    log.info({ signal }, "signal received");
    app.shutdown().then(
      () => process.exit(0),
      (err: unknown) => {
        log.error({ err }, "shutdown failed");
        process.exit(1);
      },
    );
  };
  process.on("SIGTERM", stop);
  process.on("SIGINT", stop);

  app.listen().catch((err: unknown) => {
    log.fatal({ err }, "cannot listen");
    process.exit(1);
  });
}

main();
