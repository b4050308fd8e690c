import { describe, expect, it } from "vitest";
import { loadConfig } from "../../src/config";
import { ConfigError } from "../../src/config-fields";

/** The one problem loadConfig reports for `env`, as the person starting the service reads it. */
function problemsOf(env: Record<string, string>): string {
  try {
    loadConfig(env);
  } catch (err) {
    expect(err).toBeInstanceOf(ConfigError);
    return (err as Error).message;
  }
  throw new Error("loadConfig accepted the settings");
}

describe("Redis behind Sentinel: settings", () => {
  it("reads the sentinels, the master's name, both passwords and both TLS switches; no REDIS_URL needed", () => {
    const c = loadConfig({
      REDIS_SENTINELS: "sentinel-0.redis:26379, 10.0.0.7:26380,[fd00::1]:26379",
      REDIS_SENTINEL_MASTER: "mymaster",
      REDIS_SENTINEL_PASSWORD: "s3cret-sentinel",
      REDIS_USERNAME: "context-loader",
      REDIS_PASSWORD: "s3cret-data",
      REDIS_TLS: "true",
      REDIS_SENTINEL_TLS: "false",
      REDIS_COMMAND_TIMEOUT_MS: "300",
    });
    expect(c.sessions.redis).toEqual({
      sentinel: {
        sentinels: [
          { host: "sentinel-0.redis", port: 26379 },
          { host: "10.0.0.7", port: 26380 },
          { host: "fd00::1", port: 26379 },
        ],
        masterName: "mymaster",
        sentinelPassword: "s3cret-sentinel",
        username: "context-loader",
        password: "s3cret-data",
        tls: true,
        sentinelTls: false,
      },
      commandTimeoutMs: 300,
    });
  });

  it("leaves passwords unset and TLS off when not given", () => {
    const c = loadConfig({ REDIS_SENTINELS: "127.0.0.1:26379", REDIS_SENTINEL_MASTER: "m" });
    expect(c.sessions.redis).toEqual({
      sentinel: {
        sentinels: [{ host: "127.0.0.1", port: 26379 }],
        masterName: "m",
        sentinelPassword: undefined,
        username: undefined,
        password: undefined,
        tls: false,
        sentinelTls: false,
      },
      commandTimeoutMs: 2000,
    });
  });

  it("keeps REDIS_URL's single-node and Cluster modes as they were", () => {
    expect(loadConfig({ REDIS_URL: "redis://cache:6379" }).sessions.redis).toEqual({
      url: "redis://cache:6379",
      cluster: false,
      commandTimeoutMs: 2000,
    });
    expect(loadConfig({}).sessions.redis).toBeUndefined();
  });

  it.each([
    ["no port", "sentinel-0", '"sentinel-0" is not host:port'],
    ["port 0", "10.0.0.1:0", '"10.0.0.1:0" is not host:port'],
    ["port above 65535", "10.0.0.1:65536", '"10.0.0.1:65536" is not host:port'],
    ["a URL", "redis://10.0.0.1:26379", '"redis://10.0.0.1:26379" is not host:port'],
    ["an IPv6 address without brackets", "fd00::1:26379", '"fd00::1:26379" is not host:port'],
    ["one good and one bad entry", "10.0.0.1:26379,10.0.0.2:", '"10.0.0.2:" is not host:port'],
    ["only commas", ",,", "REDIS_SENTINELS must name at least one sentinel"],
  ])("refuses a REDIS_SENTINELS with %s, naming the entry", (_, value, message) => {
    const text = problemsOf({ REDIS_SENTINELS: value, REDIS_SENTINEL_MASTER: "m" });
    expect(text).toContain(`REDIS_SENTINELS: ${message}`);
    expect(text).toContain(`(got ${JSON.stringify(value)})`);
  });

  it("refuses sentinels without the master's name", () => {
    expect(problemsOf({ REDIS_SENTINELS: "10.0.0.1:26379" })).toBe(
      "invalid settings:\n  REDIS_SENTINELS needs REDIS_SENTINEL_MASTER: the name the sentinels monitor the master under",
    );
  });

  it("refuses a master name with spaces", () => {
    expect(problemsOf({ REDIS_SENTINELS: "10.0.0.1:26379", REDIS_SENTINEL_MASTER: "my master" })).toContain(
      "REDIS_SENTINEL_MASTER: REDIS_SENTINEL_MASTER must be one word",
    );
  });

  it("refuses Sentinel together with REDIS_URL, and together with a Cluster", () => {
    const both = { REDIS_SENTINELS: "10.0.0.1:26379", REDIS_SENTINEL_MASTER: "m", REDIS_URL: "redis://cache:6379" };
    expect(problemsOf(both)).toContain("REDIS_URL and REDIS_SENTINELS both say where Redis is");
    expect(problemsOf({ ...both, REDIS_CLUSTER: "true" })).toContain(
      "REDIS_CLUSTER=true and REDIS_SENTINELS cannot be used together",
    );
  });

  it.each(["REDIS_SENTINEL_MASTER", "REDIS_SENTINEL_PASSWORD", "REDIS_USERNAME", "REDIS_PASSWORD"])(
    "refuses %s without REDIS_SENTINELS: it would do nothing",
    (name) => {
      expect(problemsOf({ [name]: "x" })).toBe(
        `invalid settings:\n  ${name} is for Redis behind Sentinel, and REDIS_SENTINELS is not set`,
      );
      expect(problemsOf({ [name]: "x", REDIS_URL: "redis://cache:6379" })).toContain(
        "(with REDIS_URL, the user, password and rediss:// go in the URL)",
      );
    },
  );

  it("refuses a TLS switch that is not true or false, and one without REDIS_SENTINELS", () => {
    expect(problemsOf({ REDIS_SENTINELS: "10.0.0.1:26379", REDIS_SENTINEL_MASTER: "m", REDIS_TLS: "yes" })).toContain(
      'REDIS_TLS: REDIS_TLS must be "true" or "false" (got "yes")',
    );
    expect(problemsOf({ REDIS_SENTINEL_TLS: "true" })).toContain(
      "REDIS_SENTINEL_TLS is for Redis behind Sentinel, and REDIS_SENTINELS is not set",
    );
  });
});
