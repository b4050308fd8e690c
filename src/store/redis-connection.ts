import { Cluster, Redis, type RedisOptions } from "ioredis";
import type { Logger } from "pino";

/**
 * Where the session store's Redis is (the REDIS_* settings): one node or a
 * Cluster seed node named by a URL, or a master found through Redis Sentinel.
 */
export type RedisConnection =
  | {
      /** redis://[user:password@]host:port[/db] (rediss:// for TLS). */
      url: string;
      /** Treat `url` as a seed node of a Redis Cluster. */
      cluster: boolean;
    }
  | { sentinel: SentinelSettings };

/** Redis behind Sentinel: the sentinels to ask, the master's name, and how to reach both. */
export interface SentinelSettings {
  sentinels: { host: string; port: number }[];
  /** The name the sentinels monitor the master under (`sentinel monitor <name> ...`). */
  masterName: string;
  /** The sentinels' own password (their `requirepass`); undefined: they ask for none. */
  sentinelPassword: string | undefined;
  /** The master's (and replicas') user and password. */
  username: string | undefined;
  password: string | undefined;
  /** TLS to the master. */
  tls: boolean;
  /** TLS to the sentinels. */
  sentinelTls: boolean;
}

/** What every mode shares: commands fail within the timeout, and the client reconnects on its own. */
interface Common {
  commandTimeout: number;
  maxRetriesPerRequest: number;
  enableOfflineQueue: boolean;
  lazyConnect: boolean;
}

/** The ioredis client for a connection; it starts connecting at once. */
export function connectRedis(connection: RedisConnection, commandTimeoutMs: number): Redis | Cluster {
  const common: Common = {
    commandTimeout: commandTimeoutMs,
    maxRetriesPerRequest: 1,
    enableOfflineQueue: true,
    lazyConnect: false,
  };
  if ("sentinel" in connection) return new Redis(sentinelOptions(connection.sentinel, common));
  if (!connection.cluster) return new Redis(connection.url, common);
  const seed = new URL(connection.url);
  return new Cluster([{ host: seed.hostname, port: Number(seed.port || 6379) }], {
    redisOptions: {
      ...common,
      password: seed.password || undefined,
      username: seed.username || undefined,
      tls: seed.protocol === "rediss:" ? {} : undefined,
    },
  });
}

function sentinelOptions(s: SentinelSettings, common: Common): RedisOptions {
  return {
    ...common,
    sentinels: s.sentinels,
    name: s.masterName,
    sentinelPassword: s.sentinelPassword,
    sentinelTLS: s.sentinelTls ? {} : undefined,
    username: s.username,
    password: s.password,
    tls: s.tls ? {} : undefined,
    enableTLSForSentinelMode: s.tls,
    // A sentinel that accepts the connection but never answers would otherwise hold every reconnect.
    sentinelCommandTimeout: common.commandTimeout,
    // A master that stops answering but keeps the connection open (paused, cut off without a reset) is
    // left, and the sentinels asked again, once it has answered nothing for this long: without it every
    // command would time out on it until the connection closed, a promoted replica unused. Twice the
    // command timeout, so an event-loop stall that delays reading a reply does not drop a live connection.
    socketTimeout: 2 * common.commandTimeout,
    // The new master is found when the connection to the old one closes: it crashed, Sentinel demoted it
    // (a demoted master closes its clients' connections), or socketTimeout gave up on it. ioredis's
    // failoverDetector (+switch-master) is left off: told of a failover while reconnecting, it ended the
    // client for good (ioredis 5.9.2, seen with the master killed), and it logs each failed reconnect to a
    // sentinel on stderr.
  };
}

/** The sentinels cannot tell where the master is: a setting to fix, reported at start-up. */
export class RedisSentinelError extends Error {
  override name = "RedisSentinelError";
}

/** How long start-up waits for each sentinel: room for a TLS handshake across a region, yet a prompt answer. */
const SENTINEL_CHECK_MS = 5000;

/**
 * Asks every sentinel, at once, where the master named in the settings is.
 * Resolves when one names it (the sentinels that failed are logged); throws
 * a RedisSentinelError saying which setting to fix when none does: none could
 * be reached (REDIS_SENTINELS), they refused the password
 * (REDIS_SENTINEL_PASSWORD), or they monitor no master of that name
 * (REDIS_SENTINEL_MASTER). The master itself being down is not checked: that
 * is an outage, which /readyz reports, not a setting.
 */
export async function checkSentinels(s: SentinelSettings, log: Logger): Promise<void> {
  const answers = await Promise.all(
    s.sentinels.map(async ({ host, port }) => {
      const where = host.includes(":") ? `[${host}]:${port}` : `${host}:${port}`;
      try {
        return { where, master: await askSentinel(s, host, port) };
      } catch (err) {
        return { where, error: (err as Error).message };
      }
    }),
  );
  const found = answers.find((a) => a.master);
  const failed = answers.filter((a) => a.error !== undefined);
  if (found) {
    if (failed.length > 0) {
      log.warn({ sentinels: failed.map((a) => `${a.where}: ${a.error}`) }, "some sentinels did not answer");
    }
    log.info({ master: s.masterName, at: found.master, sentinel: found.where }, "redis sentinel: master found");
    return;
  }
  const unaware = answers.filter((a) => a.error === undefined).map((a) => a.where);
  if (unaware.length > 0) {
    throw new RedisSentinelError(
      `the sentinels at ${unaware.join(", ")} monitor no master named "${s.masterName}"; set REDIS_SENTINEL_MASTER to the name in their "sentinel monitor" line`,
    );
  }
  const problems = failed.map((a) => `${a.where}: ${a.error}`).join("; ");
  const refused = failed.every((a) => /NOAUTH|WRONGPASS|invalid password/i.test(a.error ?? ""));
  throw new RedisSentinelError(
    refused
      ? `the sentinels refused the password (${problems}); set REDIS_SENTINEL_PASSWORD to their requirepass`
      : `no sentinel of REDIS_SENTINELS answered (${problems}); set REDIS_SENTINELS to the sentinels' host:port`,
  );
}

/** The master's host:port as one sentinel names it; undefined when it monitors no master of that name. */
async function askSentinel(s: SentinelSettings, host: string, port: number): Promise<string | undefined> {
  const client = new Redis({
    host,
    port,
    password: s.sentinelPassword,
    tls: s.sentinelTls ? {} : undefined,
    lazyConnect: true,
    enableReadyCheck: false,
    enableOfflineQueue: false,
    retryStrategy: () => null,
    maxRetriesPerRequest: 0,
    connectTimeout: SENTINEL_CHECK_MS,
    commandTimeout: SENTINEL_CHECK_MS,
  });
  // A failed connect rejects with "Connection is closed."; the cause (ECONNREFUSED, ENOTFOUND, a TLS
  // failure) comes as an error event, kept to be reported instead.
  let cause: Error | undefined;
  client.on("error", (err: Error) => {
    cause ??= err;
  });
  try {
    await client.connect();
    const reply = (await client.call("SENTINEL", "GET-MASTER-ADDR-BY-NAME", s.masterName)) as string[] | null;
    return reply === null ? undefined : `${reply[0]}:${reply[1]}`;
  } catch (err) {
    const message = (cause ?? (err as Error)).message;
    throw new Error(/unknown command/i.test(message) ? `not a sentinel (${message.trim()})` : message);
  } finally {
    client.disconnect();
  }
}
