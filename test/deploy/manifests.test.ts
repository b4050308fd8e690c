import { spawnSync } from "node:child_process";
import { existsSync, readdirSync, readFileSync } from "node:fs";
import * as http from "node:http";
import { join, posix } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { parseAllDocuments } from "yaml";
import { startServer, type TestServer } from "../helpers/server";
import { checkVariant, imageUser, type Served, settingNames } from "./checks";
import { type Files, ManifestError, parseFile, render } from "./kustomize";

/**
 * The manifests under deploy/kubernetes say what the service is: its settings'
 * names, its port, its probes, its user, its drain. Each kustomization is
 * rendered and checked against the service's own sources (src/config.ts, the
 * Dockerfile) and against the service itself, started here; a change to
 * either side that breaks one fails here naming the file and line to fix.
 */
const ROOT = fileURLToPath(new URL("../..", import.meta.url));
const DEPLOY = "deploy/kubernetes";
const SETTINGS = settingNames(readFileSync(join(ROOT, "src/config.ts"), "utf8"));

function readTree(): Map<string, string> {
  const files = new Map<string, string>();
  const walk = (dir: string): void => {
    for (const entry of readdirSync(join(ROOT, dir), { withFileTypes: true })) {
      const path = posix.join(dir, entry.name);
      if (entry.isDirectory()) walk(path);
      else if (/\.ya?ml$/.test(entry.name)) files.set(path, readFileSync(join(ROOT, path), "utf8"));
    }
  };
  walk(DEPLOY);
  if (existsSync(join(ROOT, "Dockerfile"))) files.set("Dockerfile", readFileSync(join(ROOT, "Dockerfile"), "utf8"));
  return files;
}

const variantsOf = (files: Files) =>
  [...files.keys()]
    .filter((f) => f.endsWith("/kustomization.yaml"))
    .map((f) => posix.dirname(f))
    .sort();

/** Every problem of the tree: unreadable files, files no kustomization uses, and each variant's checks. */
function problemsOf(files: Files): { problems: string[]; served: Map<string, Served> } {
  const problems: string[] = [];
  const served = new Map<string, Served>();
  const used = new Set<string>();
  const user = imageUser(files);
  for (const dir of variantsOf(files)) {
    try {
      const variant = render(files, dir);
      for (const source of variant.sources) used.add(source.file);
      used.add(posix.join(dir, "kustomization.yaml"));
      const checked = checkVariant(variant, SETTINGS, user);
      problems.push(...checked.problems);
      served.set(dir, checked.served);
    } catch (err) {
      if (!(err instanceof ManifestError)) throw err;
      problems.push(err.message);
    }
  }
  for (const file of files.keys()) {
    if (file === "Dockerfile" || used.has(file)) continue;
    try {
      if (parseFile(files, file).length > 0) problems.push(`${file}:1: no kustomization uses this file`);
    } catch (err) {
      if (!(err instanceof ManifestError)) throw err;
      problems.push(err.message);
    }
  }
  return { problems: [...new Set(problems)], served };
}

const FILES = readTree();
const CHECKED = problemsOf(FILES);

describe("the Kubernetes manifests", () => {
  it("come in the three variants deploy/kubernetes/README.md describes", () => {
    expect(variantsOf(FILES)).toEqual([
      `${DEPLOY}/base`,
      `${DEPLOY}/overlays/ingress`,
      `${DEPLOY}/overlays/single-replica-sqlite`,
    ]);
  });

  it("name only the service's settings, its port, its user, a drain it fits in and the stores its replicas need", () => {
    expect(CHECKED.problems).toEqual([]);
  });

  const kubectl = spawnSync("kubectl", ["version", "--client"], { encoding: "utf8" }).status === 0;
  it.skipIf(!kubectl)("render as `kubectl kustomize` renders them (when kubectl is installed)", () => {
    for (const dir of variantsOf(FILES)) {
      const out = spawnSync("kubectl", ["kustomize", join(ROOT, dir)], { encoding: "utf8" });
      expect(out.status, out.stderr).toBe(0);
      const byName = (objects: Record<string, unknown>[]) =>
        Object.fromEntries(
          objects.map((o) => [`${o["kind"]}/${(o["metadata"] as { name: string }).name}`, o] as const),
        );
      const theirs = (parseAllDocuments(out.stdout) as { toJS(): Record<string, unknown> }[]).map((d) => d.toJS());
      expect(byName(render(FILES, dir).objects), dir).toEqual(byName(theirs));
    }
  });
});

/** GET `path` with the Host header a kubelet or a client sends. */
function get(port: number, path: string, host: string): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = http.get({ host: "127.0.0.1", port, path, headers: { host } }, (res) => {
      let body = "";
      res.setEncoding("utf8");
      res.on("data", (chunk: string) => {
        body += chunk;
      });
      res.on("end", () => resolve({ status: res.statusCode ?? 0, body }));
    });
    req.on("error", reject);
  });
}

describe.each(variantsOf(FILES))("the service as %s configures it", (dir) => {
  const served = CHECKED.served.get(dir)!;
  let server: TestServer;
  beforeAll(async () => {
    // The variant's ALLOWED_HOSTS, and a Redis that does not answer: readiness must follow it, liveness must not.
    server = await startServer({
      ALLOWED_HOSTS: served.allowedHosts ?? "",
      REDIS_URL: "redis://127.0.0.1:1",
      REDIS_COMMAND_TIMEOUT_MS: "200",
      LOG_LEVEL: "silent",
    });
  });
  afterAll(() => server?.close());

  it("answers the startup and liveness probes while a dependency is down, and readiness follows it", async () => {
    const pod = served.hosts[0]!.host;
    expect(served.probes.map((p) => p.kind).sort()).toEqual(["livenessProbe", "readinessProbe", "startupProbe"]);
    for (const probe of served.probes) {
      const answer = await get(server.port, probe.path, pod);
      if (probe.kind === "readinessProbe") {
        expect({ where: probe.where, status: answer.status, body: JSON.parse(answer.body) }).toMatchObject({
          status: 503,
          body: { status: "not ready", checks: { redis: "failing" } },
        });
      } else {
        expect({ where: probe.where, status: answer.status }).toEqual({ where: probe.where, status: 200 });
      }
    }
  });

  it("answers every name it is called by (the pod's IP, the Service's names, the Ingress hosts) and no other", async () => {
    for (const { host, where } of served.hosts) {
      const { status } = await get(server.port, "/healthz", host);
      expect({ host, where, status }).toEqual({ host, where, status: 200 });
    }
    expect((await get(server.port, "/healthz", "rebinding.example")).status).toBe(421);
  });
});

/** The line of `needle` in `text`, 1-based. */
function lineOf(text: string, needle: string): number {
  const at = text.indexOf(needle);
  if (at === -1) throw new Error(`"${needle}" not found`);
  return text.slice(0, at).split("\n").length;
}

/** The tree with one file's `from` replaced by `to` (which must occur once). */
function changed(file: string, from: string, to: string): { files: Files; line: (needle: string) => number } {
  const text = FILES.get(file) ?? "";
  if (text.split(from).length !== 2) throw new Error(`${file}: "${from}" must occur exactly once`);
  const files = new Map(FILES).set(file, text.replace(from, to));
  return { files, line: (needle) => lineOf(files.get(file)!, needle) };
}

describe("a manifest change that breaks a check fails, naming the file and line", () => {
  const base = `${DEPLOY}/base`;

  it("a setting's name misspelled", () => {
    const { files, line } = changed(`${base}/configmap.yaml`, "LOG_LEVEL: info", "LOG_LEVLE: info");
    expect(problemsOf(files).problems).toContain(
      `${base}/configmap.yaml:${line("LOG_LEVLE")}: LOG_LEVLE is not a setting of the service (src/config.ts); did you mean LOG_LEVEL?`,
    );
  });

  it("a value the service refuses at start-up", () => {
    const { files, line } = changed(`${base}/configmap.yaml`, "MEMORY_STORE: postgres", "MEMORY_STORE: mysql");
    expect(problemsOf(files).problems.join("\n")).toContain(
      `${base}/configmap.yaml:${line("MEMORY_STORE")}: the service would not start: invalid settings: MEMORY_STORE:`,
    );
  });

  it("a probe on a port the service does not listen on", () => {
    const { files, line } = changed(
      `${base}/deployment.yaml`,
      "path: /readyz\n              port: h2c",
      "path: /readyz\n              port: 9090",
    );
    expect(problemsOf(files).problems).toContain(
      `${base}/deployment.yaml:${line("path: /readyz")}: readinessProbe's port 9090 is not the service's port`,
    );
  });

  it("a container port other than PORT", () => {
    const { files, line } = changed(`${base}/deployment.yaml`, "containerPort: 8080", "containerPort: 8081");
    expect(problemsOf(files).problems).toContain(
      `${base}/deployment.yaml:${line("containerPort")}: no containerPort is 8080, the port the service listens on (PORT)`,
    );
  });

  it("a uid other than the image's, and an image whose USER changed", () => {
    const { files, line } = changed(`${base}/deployment.yaml`, "runAsUser: 1000", "runAsUser: 0");
    expect(problemsOf(files).problems).toContain(
      `${base}/deployment.yaml:${line("runAsUser")}: runAsUser is 0, but the image runs as uid 1000 (${FILES.has("Dockerfile") ? `Dockerfile:${lineOf(FILES.get("Dockerfile")!, "USER")}` : "no Dockerfile: the image must run as USER node (1000)"})`,
    );
    const dockerfile =
      'FROM node:22-slim AS build\nUSER root\nFROM node:22-slim\nUSER 1001\nCMD ["node", "dist/main.js"]\n';
    const other = new Map(FILES).set("Dockerfile", dockerfile);
    expect(problemsOf(other).problems).toContain(
      `${base}/deployment.yaml:${lineOf(FILES.get(`${base}/deployment.yaml`)!, "runAsUser")}: runAsUser is 1000, but the image runs as uid 1001 (Dockerfile:4)`,
    );
  });

  it("a termination grace period shorter than the drain", () => {
    const { files, line } = changed(
      `${base}/deployment.yaml`,
      "terminationGracePeriodSeconds: 25",
      "terminationGracePeriodSeconds: 10",
    );
    expect(problemsOf(files).problems).toContain(
      `${base}/deployment.yaml:${line("terminationGracePeriodSeconds")}: terminationGracePeriodSeconds 10 is under the drain: preStop 5 s + SHUTDOWN_GRACE_MS 10000 ms + 3000 ms to flush and close = 18 s`,
    );
  });

  it("a Service port without h2c", () => {
    const { files, line } = changed(`${base}/service.yaml`, "      appProtocol: kubernetes.io/h2c\n", "");
    expect(problemsOf(files).problems).toContain(
      `${base}/service.yaml:${line("port: 8080")}: Service port 8080 must declare appProtocol: kubernetes.io/h2c (gRPC over HTTP/2 cleartext)`,
    );
  });

  it("an env entry that refers to a name defined below it", () => {
    const text = FILES.get(`${base}/deployment.yaml`)!;
    const podIp = text.slice(
      text.indexOf("            - name: POD_IP"),
      text.indexOf("            - name: POD_NAMESPACE"),
    );
    const { files, line } = changed(`${base}/deployment.yaml`, podIp, "");
    const moved = new Map(files).set(
      `${base}/deployment.yaml`,
      files
        .get(`${base}/deployment.yaml`)!
        .replace("            # Node's own variable", `${podIp}            # Node's own variable`),
    );
    expect(problemsOf(moved).problems).toContain(
      `${base}/deployment.yaml:${line("- name: ALLOWED_HOSTS")}: ALLOWED_HOSTS refers to $(POD_IP), which is not defined above it (Kubernetes leaves it as written)`,
    );
  });

  it("several replicas with their memories in SQLite", () => {
    const { files, line } = changed(
      `${DEPLOY}/overlays/single-replica-sqlite/deployment.yaml`,
      "replicas: 1",
      "replicas: 3",
    );
    const problems = problemsOf(files).problems;
    expect(problems).toContain(
      `${DEPLOY}/overlays/single-replica-sqlite/configmap.yaml:${lineOf(FILES.get(`${DEPLOY}/overlays/single-replica-sqlite/configmap.yaml`)!, "MEMORY_STORE")}: up to 3 replicas need MEMORY_STORE=postgres: a SQLite file is one replica's`,
    );
    expect(problems).toContain(
      `${DEPLOY}/overlays/single-replica-sqlite/deployment.yaml:${line("replicas")}: SQLite is one writer: one replica, and no autoscaler`,
    );
  });

  it("a YAML syntax error, and a file no kustomization uses", () => {
    const { files } = changed(`${base}/pdb.yaml`, "maxUnavailable: 1", "maxUnavailable: [1");
    expect(problemsOf(files).problems.some((p) => p.startsWith(`${base}/pdb.yaml:`))).toBe(true);
    const stray = new Map(FILES).set(
      `${DEPLOY}/base/extra.yaml`,
      "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: extra\ndata: {}\n",
    );
    expect(problemsOf(stray).problems).toEqual([`${DEPLOY}/base/extra.yaml:1: no kustomization uses this file`]);
  });

  it("a kustomization field the checks do not read", () => {
    const { files, line } = changed(`${base}/kustomization.yaml`, "images:", "namePrefix: prod-\nimages:");
    expect(problemsOf(files).problems).toContain(
      `${base}/kustomization.yaml:${line("namePrefix")}: "namePrefix" is not read by test/deploy/kustomize.ts; teach it there, or the checks would not see what it does`,
    );
  });
});
