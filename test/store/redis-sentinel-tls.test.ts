import { pino } from "pino";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { loadConfig } from "../../src/config";
import { checkSentinels, RedisSentinelError } from "../../src/store/redis-connection";
import { type SentinelSet, startSentinelSet } from "../helpers/processes";
import { type ServiceProcess, startServiceProcess } from "../helpers/service-process";
import { sentinelSettings, sessionRoundTrip } from "./sentinel-failover";

/**
 * Redis behind Sentinel over TLS (REDIS_TLS, REDIS_SENTINEL_TLS): a set whose
 * sentinels and data nodes speak only TLS, with certificates from a CA of the
 * test's own, given to the service as an operator would, in
 * NODE_EXTRA_CA_CERTS (read when Node starts: the service runs in a process
 * of its own).
 */
let set: SentinelSet;
let service: ServiceProcess;
const tlsSettings = () => ({ ...sentinelSettings(set), REDIS_TLS: "true", REDIS_SENTINEL_TLS: "true" });

beforeAll(async () => {
  set = await startSentinelSet({ tls: true });
  service = await startServiceProcess({ ...tlsSettings(), NODE_EXTRA_CA_CERTS: set.caFile! });
}, 60_000);

afterAll(async () => {
  await service?.destroy();
  await set?.destroy();
});

describe("Redis behind Sentinel over TLS", () => {
  it("finds the master through the sentinels and keeps a session on it", async () => {
    expect(service.lines.find((l) => l["msg"] === "redis sentinel: master found")).toMatchObject({
      at: `127.0.0.1:${set.masterPort}`,
    });
    // Keyword context reads back the schema RetrieveSchema stored in Redis.
    expect(await sessionRoundTrip(service.baseUrl, "u-sentinel-tls", "over-tls")).toMatchObject({
      instanceName: "上、下气道梗阻",
    });
    const ready = await fetch(`${service.baseUrl}/readyz`);
    expect(ready.status).toBe(200);
    expect(((await ready.json()) as { checks: Record<string, string> }).checks["redis"]).toBe("ok");
  });

  /** What the start-up check says of these settings, from this process (which does not trust the set's CA). */
  async function refusal(env: Record<string, string>): Promise<string> {
    const redis = loadConfig(env).sessions.redis;
    if (!redis || !("sentinel" in redis)) throw new Error("not Sentinel settings");
    const err = await checkSentinels(redis.sentinel, pino({ level: "silent" })).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(RedisSentinelError);
    return (err as Error).message;
  }

  it("checks the sentinels' certificates: one from an unknown CA is refused at start-up", async () => {
    expect(await refusal(tlsSettings())).toMatch(
      /^no sentinel of REDIS_SENTINELS answered \(127\.0\.0\.1:\d+: self[- ]signed certificate in certificate chain;/,
    );
  });

  it("finds no sentinel when they speak TLS and REDIS_SENTINEL_TLS is not set", async () => {
    const { REDIS_SENTINEL_TLS: _, ...plain } = tlsSettings();
    expect(await refusal(plain)).toMatch(/^no sentinel of REDIS_SENTINELS answered \(127\.0\.0\.1:\d+: /);
  });
});
