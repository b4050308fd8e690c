import { pino } from "pino";
import { ConfigError } from "../config-fields";
import { BundleError } from "../kn/embedded/bundle";
import { EmbeddedBackend } from "../kn/embedded/engine";
import { loadSimulatorConfig, type SimulatorConfig } from "./config";
import { startSimulator } from "./simulator";

/**
 * `npm run simulator`: the embedded engine over the KN bundles (KN_BUNDLE), served
 * behind the platform's REST contract with the faults SIM_* configure. Point
 * ONTOLOGY_MANAGER_URL, ONTOLOGY_QUERY_URL and OPERATOR_MARKET_URL at the URL
 * it logs.
 */
async function main(): Promise<void> {
  let config: SimulatorConfig;
  let backend: EmbeddedBackend;
  try {
    config = loadSimulatorConfig(process.env);
    backend = EmbeddedBackend.fromFiles(config.bundlePaths, { timeZone: config.timeZone });
  } catch (err) {
    if (err instanceof ConfigError || err instanceof BundleError) {
      process.stderr.write(`kn simulator cannot start: ${err.message}\n`);
      process.exit(2);
    }
    throw err;
  }
  const log = pino({ level: config.logLevel, base: { service: "kn-simulator" } });
  const sim = await startSimulator({ backend, port: config.port, host: config.host, faults: config.faults, spelling: config.spelling, log });
  log.info({ url: sim.url, instances: backend.stats(), spelling: config.spelling, faults: config.faults }, "kn simulator listening");

  const stop = (signal: NodeJS.Signals) => {
    log.info({ signal }, "signal received: stopping");
    sim.close().then(
      () => process.exit(0),
      (err: unknown) => {
        log.error({ err }, "stopping failed");
        process.exit(1);
      },
    );
  };
  process.once("SIGTERM", stop);
  process.once("SIGINT", stop);
}

main().catch((err: unknown) => {
  process.stderr.write(`kn simulator failed: ${err instanceof Error ? err.message : String(err)}\n`);
  process.exit(1);
});
