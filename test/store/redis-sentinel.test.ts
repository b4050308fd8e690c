import { pino } from "pino";
import { describe, expect, it } from "vitest";
import { loadConfig } from "../../src/config";
import { checkSentinels, RedisSentinelError } from "../../src/store/redis-connection";
import { freePort, startRedis } from "../helpers/processes";
import { startServer } from "../helpers/server";
import { runMainToExit } from "../helpers/service-process";
import { failoverChecks, sentinelSettings, sessionRoundTrip, useFailover } from "./sentinel-failover";

/**
 * Sessions in Redis behind Sentinel (REDIS_SENTINELS), the master killed
 * (SIGKILL, by its pid) while clients call; then what start-up says of
 * Sentinel settings that cannot work.
 */
const failover = useFailover((set) => set.killMaster());
const settings = () => sentinelSettings(failover().set);

describe("the Redis master killed behind Sentinel, under load", () => {
  failoverChecks(failover);

  it("keeps a session across calls on the new master", async () => {
    const { server } = failover();
    // Keyword context needs the schema this session stored a moment ago: it is read back from the new master.
    expect(await sessionRoundTrip(server.baseUrl, "u-sentinel-after", "after-failover")).toMatchObject({
      instanceName: "上、下气道梗阻",
    });
  });
});

/** main.ts on a free port, silent but for its one line of refusal on stderr. */
const runMain = (env: Record<string, string>) =>
  runMainToExit({ PORT: "0", HOST: "127.0.0.1", LOG_LEVEL: "silent", ...env });

describe("a Sentinel setting that cannot work stops start-up with one line and exit code 2", () => {
  it("says no sentinel answered at a wrong address, and which setting to fix", async () => {
    const port = await freePort();
    const { code, stderr } = await runMain({ ...settings(), REDIS_SENTINELS: `127.0.0.1:${port}` });
    expect(code).toBe(2);
    expect(stderr).toBe(
      `context-loader cannot start: no sentinel of REDIS_SENTINELS answered (127.0.0.1:${port}: connect ECONNREFUSED 127.0.0.1:${port}); set REDIS_SENTINELS to the sentinels' host:port\n`,
    );
  });

  /** The start-up check over settings read as the service reads them; what it refuses, as main.ts prints it. */
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

  it("says a Redis server that is no sentinel is not one", async () => {
    const redis = await startRedis();
    try {
      expect(
        await refusal({
          ...settings(),
          REDIS_SENTINELS: `127.0.0.1:${redis.port}`,
          // None: given one, a server that asks for none has ioredis warn on stderr.
          REDIS_SENTINEL_PASSWORD: "",
        }),
      ).toMatch(
        new RegExp(
          `^no sentinel of REDIS_SENTINELS answered \\(127\\.0\\.0\\.1:${redis.port}: not a sentinel \\(ERR unknown command .+\\)\\); set REDIS_SENTINELS to the sentinels' host:port$`,
        ),
      );
    } finally {
      await redis.stop();
    }
  });

  it("says the sentinels monitor no master of a wrong REDIS_SENTINEL_MASTER", async () => {
    expect(await refusal({ ...settings(), REDIS_SENTINEL_MASTER: "no-such-master" })).toBe(
      `the sentinels at ${failover().set.sentinels.split(",").join(", ")} monitor no master named "no-such-master"; set REDIS_SENTINEL_MASTER to the name in their "sentinel monitor" line`,
    );
  });

  it("says the sentinels refused a wrong REDIS_SENTINEL_PASSWORD, or none given", async () => {
    for (const password of ["wrong", ""]) {
      const message = await refusal({ ...settings(), REDIS_SENTINEL_PASSWORD: password });
      expect(message).toMatch(/^the sentinels refused the password \(127\.0\.0\.1:\d+: (WRONGPASS|NOAUTH)/);
      expect(message).toMatch(/; set REDIS_SENTINEL_PASSWORD to their requirepass$/);
    }
  });

  it("starts when one sentinel of the list is wrong but another names the master", async () => {
    const port = await freePort();
    const started = await startServer({
      ...settings(),
      REDIS_SENTINELS: `127.0.0.1:${port},${failover().set.sentinels}`,
    });
    try {
      expect(started.logs.find((l) => l.msg === "some sentinels did not answer")).toMatchObject({
        sentinels: [`127.0.0.1:${port}: connect ECONNREFUSED 127.0.0.1:${port}`],
      });
      expect((await fetch(`${started.baseUrl}/readyz`)).status).toBe(200);
    } finally {
      await started.close();
    }
  });
});
