import { describe, expect, it } from "vitest";
import { ConfigError, loadConfig } from "../../src/config";

describe("loadConfig", () => {
  it("runs with nothing set: port 8080 on every interface, no TLS, no cross-origin callers", () => {
    const c = loadConfig({});
    expect(c).toMatchObject({
      port: 8080,
      host: "0.0.0.0",
      tls: undefined,
      corsAllowedOrigins: [],
      readMaxBytes: 4 * 1024 * 1024,
      shutdownGraceMs: 10_000,
      logLevel: "info",
      memrecallMaxContextWindow: 200,
    });
  });

  it("reads every setting from the environment", () => {
    const c = loadConfig({
      PORT: "9090",
      HOST: "127.0.0.1",
      CORS_ALLOWED_ORIGINS: "http://a.example:3000, https://b.example",
      READ_MAX_BYTES: "2048",
      WRITE_MAX_BYTES: "4096",
      SHUTDOWN_GRACE_MS: "0",
      LOG_LEVEL: "warn",
      MEMRECALL_MAX_CONTEXT_WINDOW: "50",
    });
    expect(c).toMatchObject({
      port: 9090,
      host: "127.0.0.1",
      corsAllowedOrigins: ["http://a.example:3000", "https://b.example"],
      readMaxBytes: 2048,
      writeMaxBytes: 4096,
      shutdownGraceMs: 0,
      logLevel: "warn",
      memrecallMaxContextWindow: 50,
    });
  });

  it.each([
    [{ PORT: "http" }, /PORT: PORT must be a whole number \(got "http"\)/],
    [{ PORT: "70000" }, /PORT: PORT must be between 0 and 65535/],
    [{ LOG_LEVEL: "loud" }, /LOG_LEVEL/],
    [{ CORS_ALLOWED_ORIGINS: "agent.example" }, /CORS_ALLOWED_ORIGINS: each origin must be/],
    [{ READ_MAX_BYTES: "10" }, /READ_MAX_BYTES: READ_MAX_BYTES must be between 1024/],
    [{ TLS_CERT: "/tmp/cert.pem" }, /TLS_CERT and TLS_KEY must be set together/],
    [{ TLS_CERT: "/nonexistent/cert.pem", TLS_KEY: "/nonexistent/key.pem" }, /TLS_CERT: cannot read \/nonexistent\/cert.pem/],
  ])("stops start-up naming the variable for %o", (env, message) => {
    expect(() => loadConfig(env)).toThrow(ConfigError);
    expect(() => loadConfig(env)).toThrow(message);
  });

  it("treats empty values as unset", () => {
    expect(loadConfig({ PORT: "", CORS_ALLOWED_ORIGINS: " " }).port).toBe(8080);
  });
});
