import { pino } from "pino";
import { ConfigError } from "../config-fields";
import { BundleError } from "../kn/embedded/bundle";
import { EmbeddedBackend } from "../kn/embedded/engine";
import { stopOnSignals } from "../stop-on-signals";
import { loadSimulatorConfig, type SimulatorConfig } from "./config";
import { startSimulator } from "./simulator";

/**
 * `npm run simulator`: the embedded engine over the KN bundles (KN_BUNDLE),
 * served behind the platform's REST contract with the faults SIM_* configure.
 * Point ONTOLOGY_MANAGER_URL, ONTOLOGY_QUERY_URL and OPERATOR_MARKET_URL at the
 * URL it logs, with either PLATFORM_API_LAYOUT: it serves the paths of both.
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
  const { port, host, faults, spelling } = config;
  const sim = await startSimulator({ backend, port, host, faults, spelling, log });
  log.info({ url: sim.url, instances: backend.stats(), spelling, faults }, "kn simulator listening");
  stopOnSignals(log, () => sim.close());
}

main().catch((err: unknown) => {
  process.stderr.write(`kn simulator failed: ${err instanceof Error ? err.message : String(err)}\n`);
  process.exit(1);
});
