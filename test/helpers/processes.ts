import { type ChildProcess, execFile, execFileSync, spawn } from "node:child_process";
import { chownSync, existsSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { createConnection, createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";

/**
 * Redis and PostgreSQL servers a fault test starts for itself, on free
 * loopback ports, and stops and starts again by their own process ids: never
 * the shared instances on 6379 and 5432. Each is removed when the test ends.
 */

/** A TCP port nothing listens on now (the kernel's pick). */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const probe = createServer();
    probe.once("error", reject);
    probe.listen(0, "127.0.0.1", () => {
      const { port } = probe.address() as { port: number };
      probe.close(() => resolve(port));
    });
  });
}

/** Resolves once something accepts TCP connections on the port; rejects after `ms`. */
async function listening(port: number, ms: number): Promise<void> {
  const deadline = Date.now() + ms;
  for (;;) {
    const open = await new Promise<boolean>((resolve) => {
      const socket = createConnection({ port, host: "127.0.0.1" });
      socket.once("connect", () => {
        socket.destroy();
        resolve(true);
      });
      socket.once("error", () => resolve(false));
    });
    if (open) return;
    if (Date.now() > deadline) throw new Error(`nothing listens on 127.0.0.1:${port} after ${ms} ms`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

export interface RedisProcess {
  port: number;
  url: string;
  /** Stops it (SIGTERM to its pid; SIGKILL after 5 s); nothing it held survives, as with `--save ""`. */
  stop(): Promise<void>;
  /** Starts it again on the same port. */
  start(): Promise<void>;
}

/** A redis-server of the test's own, without persistence. */
export async function startRedis(): Promise<RedisProcess> {
  const port = await freePort();
  let child: ChildProcess | undefined;
  const start = async () => {
    child = spawn(
      "redis-server",
      ["--port", String(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no", "--protected-mode", "no"],
      { stdio: "ignore" },
    );
    await listening(port, 5000);
  };
  const stop = async () => {
    const running = child;
    child = undefined;
    if (!running || running.exitCode !== null) return;
    const exited = new Promise((r) => running.once("exit", r));
    running.kill("SIGTERM");
    const timer = setTimeout(() => running.kill("SIGKILL"), 5000);
    await exited;
    clearTimeout(timer);
  };
  await start();
  return { port, url: `redis://127.0.0.1:${port}`, stop, start };
}

export interface PostgresProcess {
  port: number;
  /** postgres://postgres@127.0.0.1:<port>/postgres */
  url: string;
  /** Stops the postmaster this test started (pg_ctl, by its pid file): "immediate" is a crash (WAL recovery at the next start). */
  stop(mode: "fast" | "immediate"): Promise<void>;
  start(): Promise<void>;
  /** Stops it if it runs and removes its data directory. */
  destroy(): Promise<void>;
}

/** The directory of PostgreSQL's programs (initdb, pg_ctl), newest version first; undefined when none is installed. */
export function postgresBin(): string | undefined {
  const base = "/usr/lib/postgresql";
  if (!existsSync(base)) return undefined;
  const versions = readdirSync(base).sort((a, b) => Number(b) - Number(a));
  return versions.map((v) => join(base, v, "bin")).find((dir) => existsSync(join(dir, "pg_ctl")));
}

/**
 * A PostgreSQL cluster of the test's own: initdb in a temporary directory,
 * trust authentication on loopback, its socket in that directory. PostgreSQL
 * refuses to run as root, so as root its programs run as the postgres user.
 */
export async function startPostgres(): Promise<PostgresProcess> {
  const bin = postgresBin();
  if (!bin) throw new Error("PostgreSQL is not installed (no /usr/lib/postgresql/*/bin/pg_ctl)");
  const port = await freePort();
  const dir = mkdtempSync(join(tmpdir(), "pg-fault-"));
  const data = join(dir, "data");
  const asRoot = process.getuid?.() === 0;
  if (asRoot) {
    const uid = Number(execFileSync("id", ["-u", "postgres"]).toString().trim());
    const gid = Number(execFileSync("id", ["-g", "postgres"]).toString().trim());
    chownSync(dir, uid, gid);
  }
  // Not execFileSync: the test's clients keep calling while PostgreSQL stops and starts.
  const run = async (program: string, args: string[]) => {
    const [file, argv] = asRoot
      ? ["runuser", ["-u", "postgres", "--", join(bin, program), ...args]]
      : [join(bin, program), args];
    await promisify(execFile)(file, argv, { timeout: 60_000 });
  };
  await run("initdb", ["-D", data, "-U", "postgres", "-A", "trust", "--no-sync", "-E", "UTF8"]);
  const options = `-p ${port} -k ${dir} -c listen_addresses=127.0.0.1`;
  let running = false;
  const start = async () => {
    await run("pg_ctl", ["-D", data, "-o", options, "-l", join(dir, "log"), "-w", "-t", "30", "start"]);
    running = true;
  };
  const stop = async (mode: "fast" | "immediate") => {
    if (!running) return;
    await run("pg_ctl", ["-D", data, "-m", mode, "-w", "-t", "30", "stop"]);
    running = false;
  };
  await start();
  return {
    port,
    url: `postgres://postgres@127.0.0.1:${port}/postgres`,
    stop,
    start,
    async destroy() {
      try {
        await stop("immediate");
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
    },
  };
}

export interface SentinelSet {
  /** The master's name the sentinels monitor. */
  masterName: string;
  /** host:port of each sentinel, comma-separated (REDIS_SENTINELS). */
  sentinels: string;
  /** With `tls`: the CA certificate that signed every node's certificate (for NODE_EXTRA_CA_CERTS). */
  caFile: string | undefined;
  /** The data nodes' password (REDIS_PASSWORD) and the sentinels' (REDIS_SENTINEL_PASSWORD). */
  password: string;
  sentinelPassword: string;
  /** Ports of the master and the replica as started (the replica becomes master after a failover). */
  masterPort: number;
  replicaPort: number;
  /** Whether the data node on `port` is a master now (its own ROLE: promoted, not yet known to every sentinel). */
  isMaster(port: number): Promise<boolean>;
  /** SIGKILL to the master's pid: a crash, nothing flushed. */
  killMaster(): Promise<void>;
  /** SIGSTOP to the master's pid: it answers nothing and closes nothing, as a hung or cut-off server. */
  pauseMaster(): void;
  /** Stops every process of the set still running, by pid, and removes its directory. */
  destroy(): Promise<void>;
}

/** The name the test sentinels monitor their master under. */
const SENTINEL_MASTER = "test-master";

/**
 * A Redis master, one replica and three sentinels of the test's own (quorum
 * 2), with passwords on both, a master declared down after 1 s and a
 * failover timeout of 3 s, so that a failover completes in a few seconds.
 * Resolves once every sentinel knows the replica and the two other sentinels
 * (until then a failover could not be voted). With `tls`, every node (data
 * and sentinel) speaks only TLS, with a certificate for 127.0.0.1 signed by a
 * CA made for the set (`caFile`); clients are not asked for certificates.
 */
export async function startSentinelSet({ tls = false }: { tls?: boolean } = {}): Promise<SentinelSet> {
  const dir = mkdtempSync(join(tmpdir(), "sentinel-"));
  const password = "data-pw";
  const sentinelPassword = "sentinel-pw";
  const children: ChildProcess[] = [];
  const spawnRedis = (args: string[]) => {
    const child = spawn("redis-server", args, { stdio: "ignore" });
    children.push(child);
    return child;
  };
  const destroy = async () => {
    await Promise.all(
      children.map(async (child) => {
        if (child.exitCode !== null || child.signalCode !== null) return;
        const exited = new Promise((r) => child.once("exit", r));
        // A paused process acts on SIGTERM only once continued.
        child.kill("SIGCONT");
        child.kill("SIGTERM");
        const timer = setTimeout(() => child.kill("SIGKILL"), 5000);
        await exited;
        clearTimeout(timer);
      }),
    );
    rmSync(dir, { recursive: true, force: true });
  };
  try {
    const [masterPort, replicaPort, ...sentinelPorts] = await distinctFreePorts(5);
    const caFile = tls ? await makeCertificates(dir) : undefined;
    // The same directives for data nodes (as arguments) and sentinels (in their file): the port, TLS or not.
    const listen = (port: number) =>
      tls
        ? [
            ["port", "0"],
            ["tls-port", String(port)],
            ["tls-cert-file", join(dir, "server.crt")],
            ["tls-key-file", join(dir, "server.key")],
            ["tls-ca-cert-file", caFile!],
            ["tls-auth-clients", "no"],
            ["tls-replication", "yes"],
          ]
        : [["port", String(port)]];
    const data = (port: number) =>
      [
        ...listen(port),
        ["bind", "127.0.0.1"],
        ["save", ""],
        ["appendonly", "no"],
        ["requirepass", password],
        ["masterauth", password],
        // The replica's first sync starts at once, not after the default 5 s wait for more replicas.
        ["repl-diskless-sync-delay", "0"],
        ["dir", dir],
      ].flatMap(([name, value]) => [`--${name}`, value!]);
    const master = spawnRedis(data(masterPort!));
    spawnRedis([...data(replicaPort!), "--replicaof", "127.0.0.1", String(masterPort)]);
    await Promise.all([listening(masterPort!, 5000), listening(replicaPort!, 5000)]);
    for (const port of sentinelPorts) {
      // Sentinels rewrite their configuration file: each gets its own, in the set's directory.
      const conf = join(dir, `sentinel-${port}.conf`);
      writeFileSync(
        conf,
        [
          ...listen(port).map(([name, value]) => `${name} ${value}`),
          "bind 127.0.0.1",
          "protected-mode no",
          `dir ${dir}`,
          `requirepass ${sentinelPassword}`,
          `sentinel monitor ${SENTINEL_MASTER} 127.0.0.1 ${masterPort} 2`,
          `sentinel auth-pass ${SENTINEL_MASTER} ${password}`,
          `sentinel down-after-milliseconds ${SENTINEL_MASTER} 1000`,
          `sentinel failover-timeout ${SENTINEL_MASTER} 3000`,
          "",
        ].join("\n"),
      );
      spawnRedis([conf, "--sentinel"]);
    }
    await Promise.all(sentinelPorts.map((p) => listening(p, 5000)));
    const cli = (port: number, pass: string, args: string[]) =>
      redisCli(port, pass, caFile ? ["--tls", "--cacert", caFile, ...args] : args);
    const ask = (port: number, ...args: string[]) => cli(port, sentinelPassword, ["SENTINEL", ...args]);
    // Sentinels find the replica through the master's INFO and each other through hello messages (every 2 s).
    const deadline = Date.now() + 20_000;
    for (;;) {
      const views = await Promise.all(sentinelPorts.map((p) => ask(p, "MASTER", SENTINEL_MASTER)));
      const known = views.every((v) => /num-slaves\n1\n/.test(v) && /num-other-sentinels\n2\n/.test(v));
      if (known) break;
      if (Date.now() > deadline) throw new Error(`the sentinels did not find each other and the replica:\n${views[0]}`);
      await new Promise((r) => setTimeout(r, 200));
    }
    return {
      masterName: SENTINEL_MASTER,
      sentinels: sentinelPorts.map((p) => `127.0.0.1:${p}`).join(","),
      caFile,
      password,
      sentinelPassword,
      masterPort: masterPort!,
      replicaPort: replicaPort!,
      async isMaster(port) {
        return (await cli(port, password, ["ROLE"])).startsWith("master\n");
      },
      pauseMaster() {
        master.kill("SIGSTOP");
      },
      async killMaster() {
        const exited = new Promise((r) => master.once("exit", r));
        master.kill("SIGKILL");
        await exited;
      },
      destroy,
    };
  } catch (err) {
    await destroy();
    throw err;
  }
}

/** `count` free ports, none twice. */
async function distinctFreePorts(count: number): Promise<number[]> {
  const ports = new Set<number>();
  while (ports.size < count) ports.add(await freePort());
  return [...ports];
}

/** One redis-cli command against a loopback port (`args` may start with its TLS options); its raw reply, one value per line. */
async function redisCli(port: number, password: string, args: string[]): Promise<string> {
  const { stdout } = await promisify(execFile)(
    "redis-cli",
    ["-h", "127.0.0.1", "-p", String(port), "--no-auth-warning", "-a", password, ...args],
    { timeout: 5000 },
  );
  return stdout;
}

/** A CA and a certificate for 127.0.0.1 signed by it (server.crt, server.key) in `dir`, made with openssl; the CA's file. */
async function makeCertificates(dir: string): Promise<string> {
  const openssl = (...args: string[]) => promisify(execFile)("openssl", args, { cwd: dir, timeout: 30_000 });
  const key = ["-newkey", "rsa:2048", "-nodes"];
  await openssl("req", "-x509", ...key, "-keyout", "ca.key", "-out", "ca.crt", "-days", "1", "-subj", "/CN=test-ca");
  await openssl("req", ...key, "-keyout", "server.key", "-out", "server.csr", "-subj", "/CN=127.0.0.1");
  writeFileSync(join(dir, "server.ext"), "subjectAltName=IP:127.0.0.1\n");
  await openssl(
    ...["x509", "-req", "-in", "server.csr", "-CA", "ca.crt", "-CAkey", "ca.key", "-CAcreateserial"],
    ...["-out", "server.crt", "-days", "1", "-extfile", "server.ext"],
  );
  return join(dir, "ca.crt");
}
