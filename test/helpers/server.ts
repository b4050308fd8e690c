import { Writable } from "node:stream";
import { pino } from "pino";
import { type App, createApp } from "../../src/app";
import { loadConfig } from "../../src/config";

/** One JSON log line the server wrote. */
export type LogLine = Record<string, unknown> & { msg?: string; level?: number };

export interface TestServer {
  app: App;
  port: number;
  /** http://127.0.0.1:<port> */
  baseUrl: string;
  /** Every log line so far. */
  logs: LogLine[];
  /** Shuts the server down (idempotent). */
  close(): Promise<void>;
}

/**
 * Starts the real service on a free loopback port, with settings from `env`
 * (the same variables as production) and its logs captured in memory;
 * `overrides` as createApp takes them (a knowledge-network backend built here).
 */
export async function startServer(
  env: Record<string, string> = {},
  overrides: Parameters<typeof createApp>[2] = {},
): Promise<TestServer> {
  const logs: LogLine[] = [];
  const sink = new Writable({
    write(chunk: Buffer, _enc, done) {
      for (const line of chunk.toString("utf8").split("\n")) {
        if (line.trim() !== "") logs.push(JSON.parse(line) as LogLine);
      }
      done();
    },
  });
  // Each server gets a private in-process SQLite unless the test names a store: tests never share memories by accident.
  // Answers in English unless the test asks otherwise (the language tests set DEFAULT_LANGUAGE or send Accept-Language).
  const config = loadConfig({
    DEFAULT_LANGUAGE: "en",
    PORT: "0",
    HOST: "127.0.0.1",
    SHUTDOWN_GRACE_MS: "2000",
    SQLITE_PATH: ":memory:",
    ...env,
  });
  const log = pino({ level: env["LOG_LEVEL"] ?? "debug" }, sink);
  const app = createApp(config, log, overrides);
  const port = await app.listen();
  return { app, port, baseUrl: `http://127.0.0.1:${port}`, logs, close: () => app.shutdown() };
}
