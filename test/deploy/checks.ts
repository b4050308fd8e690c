import { posix } from "node:path";
import ts from "typescript";
import { type Config, loadConfig } from "../../src/config";
import { ConfigError } from "../../src/config-fields";
import { PUBLIC_PREFIX } from "../../src/server/auth";
import { containersOf, type Files, type K8sObject, locate, type Variant } from "./kustomize";

/**
 * What can drift between the manifests under deploy/kubernetes and the
 * service: each check returns its problems as lines that start with the file
 * and line to change. test/deploy/manifests.test.ts runs them on every
 * kustomization, and on broken copies to show they fail.
 */

/** What the kubelet puts in the downward-API fields these manifests read, for expanding $(NAME) references. */
export const EXAMPLE_POD = { ip: "10.42.0.7", namespace: "retrieval", name: "context-loader-7d9f8-abcde" };

/** Node's own variables, which the container may set beside the service's settings. */
const NODE_VARIABLES = new Set(["NODE_OPTIONS"]);

/**
 * After the grace period the listener gives aborted calls 1 s to flush
 * (FLUSH_AFTER_ABORT_MS, src/server/listener.ts), then the stores close
 * (Redis QUIT, the PostgreSQL pool): 3 s for both before SIGKILL may come.
 */
const AFTER_GRACE_MS = 3000;
/** /readyz gives each dependency's check 2 s (src/server/probes.ts); the probe must wait longer. */
const READINESS_CHECK_MS = 2000;

/** The names of the service's settings: the keys of the zod object `envSchema` in src/config.ts. */
export function settingNames(configSource: string): Set<string> {
  const file = ts.createSourceFile("config.ts", configSource, ts.ScriptTarget.Latest);
  let names: string[] | undefined;
  const findObject = (node: ts.Node): void => {
    if (names) return;
    if (
      ts.isCallExpression(node) &&
      node.expression.getText(file) === "z.object" &&
      node.arguments[0] &&
      ts.isObjectLiteralExpression(node.arguments[0])
    ) {
      names = node.arguments[0].properties.flatMap((p) => (p.name && ts.isIdentifier(p.name) ? [p.name.text] : []));
    } else ts.forEachChild(node, findObject);
  };
  const findSchema = (node: ts.Node): void => {
    if (ts.isVariableDeclaration(node) && node.name.getText(file) === "envSchema" && node.initializer) {
      findObject(node.initializer);
    } else ts.forEachChild(node, findSchema);
  };
  findSchema(file);
  if (!names || names.length === 0) throw new Error("src/config.ts: no `const envSchema = z.object({...})` found");
  return new Set(names);
}

/** The uid and gid the image runs as, and where that is said. */
export interface ImageUser {
  uid: number;
  gid: number;
  where: string;
}

/**
 * The last USER of the Dockerfile's last stage: `node` is uid and gid 1000 in
 * the official Node images, and the CI's stand-in base gives it the same;
 * otherwise it must be numeric. Without a Dockerfile, uid 1000 (the image
 * must then say USER node, or 1000).
 */
export function imageUser(files: Files): ImageUser | string {
  const text = files.get("Dockerfile");
  if (text === undefined)
    return { uid: 1000, gid: 1000, where: "no Dockerfile: the image must run as USER node (1000)" };
  let user: { value: string; line: number } | undefined;
  text.split("\n").forEach((line, i) => {
    const m = /^\s*(FROM|USER)\s+(\S+)/i.exec(line);
    if (m?.[1]?.toUpperCase() === "FROM") user = undefined;
    else if (m) user = { value: m[2]!, line: i + 1 };
  });
  if (user === undefined) return "Dockerfile: the last stage has no USER, so the image runs as root";
  const where = `Dockerfile:${user.line}`;
  if (user.value === "node") return { uid: 1000, gid: 1000, where };
  const numeric = /^(\d+)(?::(\d+))?$/.exec(user.value);
  if (!numeric)
    return `${where}: USER ${user.value}: write the uid as a number (or use node), so the manifests can be checked against it`;
  return { uid: Number(numeric[1]), gid: Number(numeric[2] ?? numeric[1]), where };
}

/** A probe as the kubelet would send it. */
export interface Probe {
  kind: "startupProbe" | "readinessProbe" | "livenessProbe";
  path: string;
  where: string;
}

/** What the test checks against a running service, per variant. */
export interface Served {
  probes: Probe[];
  /** ALLOWED_HOSTS as the pod gets it (the downward API's values put in). */
  allowedHosts: string | undefined;
  /** Host values clients send: the Service's names, the Ingress hosts, the pod's IP and port. */
  hosts: { host: string; where: string }[];
}

/** Every problem of one rendered kustomization, and what to check against a running service. */
export function checkVariant(
  v: Variant,
  settings: Set<string>,
  user: ImageUser | string,
): { problems: string[]; served: Served } {
  const problems: string[] = [];
  const at = (key: string, value?: string | number, within?: string) =>
    locate(v.sources, key, value, within) ?? `${posix.join(v.dir, "kustomization.yaml")}:1`;
  const served: Served = { probes: [], allowedHosts: undefined, hosts: [] };

  for (const o of v.objects) problems.push(...structure(o, at));
  const deployments = v.objects.filter((o) => o["kind"] === "Deployment");
  if (deployments.length !== 1) {
    problems.push(`${v.dir}: renders ${deployments.length} Deployments; the checks expect one`);
    return { problems, served };
  }
  const deployment = deployments[0]!;
  const pod = deployment["spec"]?.["template"]?.["spec"] ?? {};
  const container = containersOf(deployment)[0];
  if (container === undefined) return { problems, served };

  // The environment the container gets, and whether every name in it is a setting.
  const { env, auxiliary, problems: envProblems } = environment(v, container, at);
  problems.push(...envProblems);
  for (const [name, { where }] of env) {
    if (!settings.has(name) && !NODE_VARIABLES.has(name) && !auxiliary.has(name)) {
      problems.push(`${where}: ${name} is not a setting of the service (src/config.ts)${suggest(name, settings)}`);
    }
  }
  let config: Config;
  try {
    config = loadConfig(Object.fromEntries([...env].map(([k, { value }]) => [k, value])));
  } catch (err) {
    if (!(err instanceof ConfigError)) throw err;
    const named = /\b([A-Z][A-Z0-9_]{2,})\b/.exec(err.message.split("\n")[1] ?? "")?.[1];
    const where = named ? (env.get(named)?.where ?? at(named)) : at("kind", "Deployment");
    problems.push(`${where}: the service would not start: ${err.message.replace(/\n\s*/g, " ")}`);
    return { problems, served };
  }
  served.allowedHosts = env.get("ALLOWED_HOSTS")?.value;

  // Ports: the container's, the probes', the Service's all lead to PORT.
  const ports = (container["ports"] ?? []) as K8sObject[];
  const servingPort = ports.find((p) => p["containerPort"] === config.server.port);
  if (servingPort === undefined) {
    problems.push(
      `${at("containerPort")}: no containerPort is ${config.server.port}, the port the service listens on (PORT)`,
    );
  }
  const leadsToServingPort = (port: unknown) =>
    servingPort !== undefined && (port === servingPort["containerPort"] || port === servingPort["name"]);
  served.hosts.push({ host: `${EXAMPLE_POD.ip}:${config.server.port}`, where: at("fieldPath", "status.podIP") });

  for (const kind of ["startupProbe", "livenessProbe", "readinessProbe"] as const) {
    const probe = container[kind];
    const get = probe?.["httpGet"];
    if (typeof get?.["path"] !== "string") {
      problems.push(`${at("name", container["name"])}: the container has no ${kind} with httpGet`);
      continue;
    }
    const where = at("path", get["path"], kind);
    if (!leadsToServingPort(get["port"]))
      problems.push(`${where}: ${kind}'s port ${get["port"]} is not the service's port`);
    if (get["host"] !== undefined) problems.push(`${where}: ${kind} sets host; the kubelet must call the pod`);
    served.probes.push({ kind, path: get["path"], where });
  }
  const readinessTimeout = container["readinessProbe"]?.["timeoutSeconds"] ?? 1;
  if (readinessTimeout * 1000 <= READINESS_CHECK_MS) {
    problems.push(
      `${at("readinessProbe")}: readinessProbe.timeoutSeconds ${readinessTimeout} must be above the ${READINESS_CHECK_MS / 1000} s /readyz gives each dependency`,
    );
  }

  problems.push(...securityContext(pod, container, user, at));
  problems.push(...drain(pod, container, config, at));
  problems.push(...resources(container, env, at));
  problems.push(...replicas(v, deployment, pod, container, config, at));

  for (const service of v.objects.filter((o) => o["kind"] === "Service")) {
    const name = service["metadata"]["name"];
    if (!matches(service["spec"]?.["selector"], deployment["spec"]["template"]["metadata"]?.["labels"])) {
      problems.push(
        `${at("selector")}: Service ${name} selects no pod of Deployment ${deployment["metadata"]["name"]}`,
      );
    }
    for (const port of service["spec"]?.["ports"] ?? []) {
      const where = at("port", port["port"]);
      if (!leadsToServingPort(port["targetPort"] ?? port["port"])) {
        problems.push(`${where}: Service port ${port["port"]} leads to ${port["targetPort"]}, not the service's port`);
      }
      if (port["appProtocol"] !== "kubernetes.io/h2c") {
        problems.push(
          `${where}: Service port ${port["port"]} must declare appProtocol: kubernetes.io/h2c (gRPC over HTTP/2 cleartext)`,
        );
      }
      const ns = EXAMPLE_POD.namespace;
      for (const host of [name, `${name}.${ns}`, `${name}.${ns}.svc`, `${name}.${ns}.svc.cluster.local`]) {
        served.hosts.push({ host: `${host}:${port["port"]}`, where: at("name", "ALLOWED_HOSTS") });
      }
    }
  }
  problems.push(...ingresses(v, config, served, at));
  return { problems, served };
}

const KNOWN: Record<string, { apiVersion: string; required: string[][] }> = {
  ConfigMap: { apiVersion: "v1", required: [["data"]] },
  Secret: { apiVersion: "v1", required: [] },
  Service: {
    apiVersion: "v1",
    required: [
      ["spec", "selector"],
      ["spec", "ports"],
    ],
  },
  PersistentVolumeClaim: {
    apiVersion: "v1",
    required: [
      ["spec", "accessModes"],
      ["spec", "resources", "requests", "storage"],
    ],
  },
  Deployment: {
    apiVersion: "apps/v1",
    required: [
      ["spec", "selector", "matchLabels"],
      ["spec", "template", "metadata", "labels"],
      ["spec", "template", "spec", "containers"],
    ],
  },
  PodDisruptionBudget: { apiVersion: "policy/v1", required: [["spec", "selector", "matchLabels"]] },
  HorizontalPodAutoscaler: {
    apiVersion: "autoscaling/v2",
    required: [
      ["spec", "scaleTargetRef", "name"],
      ["spec", "maxReplicas"],
      ["spec", "metrics"],
    ],
  },
  Ingress: { apiVersion: "networking.k8s.io/v1", required: [["spec", "rules"]] },
};

/** What the API server would refuse: an unknown kind or version, a missing required field, a selector that selects nothing. */
function structure(o: K8sObject, at: (key: string, value?: string) => string): string[] {
  const kind = String(o["kind"]);
  const name = o["metadata"]?.["name"];
  const where = at("kind", kind);
  const known = KNOWN[kind];
  if (known === undefined)
    return [`${where}: kind ${kind} is not one the checks know (${Object.keys(KNOWN).join(", ")})`];
  const problems: string[] = [];
  if (o["apiVersion"] !== known.apiVersion)
    problems.push(`${at("apiVersion", o["apiVersion"])}: ${kind} is ${known.apiVersion}, not ${o["apiVersion"]}`);
  if (typeof name !== "string" || !/^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/.test(name))
    problems.push(`${where}: ${kind} needs metadata.name, a DNS label`);
  for (const path of known.required) {
    if (path.reduce<unknown>((x, k) => (x as K8sObject | undefined)?.[k], o) === undefined) {
      problems.push(`${where}: ${kind} ${name} has no ${path.join(".")}`);
    }
  }
  if (
    kind === "Deployment" &&
    !matches(o["spec"]?.["selector"]?.["matchLabels"], o["spec"]?.["template"]?.["metadata"]?.["labels"])
  ) {
    problems.push(`${at("selector")}: Deployment ${name}'s selector does not match its pods' labels`);
  }
  for (const c of containersOf(o)) {
    if (typeof c["name"] !== "string" || typeof c["image"] !== "string")
      problems.push(`${where}: every container needs a name and an image`);
  }
  for (const map of ["data", "stringData"]) {
    for (const [k, value] of Object.entries((o[map] ?? {}) as Record<string, unknown>)) {
      if (typeof value !== "string") problems.push(`${at(k)}: ${kind} ${map} values are strings; quote ${k}'s`);
    }
  }
  return problems;
}

function matches(selector: Record<string, string> | undefined, labels: Record<string, string> | undefined): boolean {
  return (
    selector !== undefined &&
    Object.keys(selector).length > 0 &&
    Object.entries(selector).every(([k, value]) => labels?.[k] === value)
  );
}

interface EnvEntry {
  value: string;
  where: string;
}

/**
 * The variables the container starts with, as the kubelet builds them: envFrom
 * first, then env in order, each $(NAME) expanded from the names above it (an
 * unknown one stays as written: Kubernetes does not expand it). `auxiliary`:
 * env entries that exist to be referenced by a later entry (POD_IP).
 */
function environment(v: Variant, container: K8sObject, at: (key: string, value?: string) => string) {
  const env = new Map<string, EnvEntry>();
  const auxiliary = new Set<string>();
  const problems: string[] = [];
  const named = (kind: string, name: string) =>
    v.objects.find((o) => o["kind"] === kind && o["metadata"]?.["name"] === name);
  for (const from of (container["envFrom"] ?? []) as K8sObject[]) {
    const ref = from["configMapRef"] ?? from["secretRef"];
    const kind = from["configMapRef"] ? "ConfigMap" : "Secret";
    const source = named(kind, ref?.["name"]);
    if (source === undefined) {
      problems.push(`${at("name", ref?.["name"])}: envFrom names ${kind} ${ref?.["name"]}, which is not in ${v.dir}`);
      continue;
    }
    for (const [k, value] of Object.entries(secretValues(source))) env.set(k, { value, where: at(k) });
  }
  for (const entry of (container["env"] ?? []) as K8sObject[]) {
    const name = entry["name"] as string;
    const where = at("name", name);
    let value: string;
    const field = entry["valueFrom"]?.["fieldRef"]?.["fieldPath"];
    if (field !== undefined) {
      const fields: Record<string, string> = {
        "status.podIP": EXAMPLE_POD.ip,
        "metadata.namespace": EXAMPLE_POD.namespace,
        "metadata.name": EXAMPLE_POD.name,
      };
      value = fields[field] ?? "";
      if (!(field in fields)) problems.push(`${where}: ${name} reads fieldRef ${field}, which the checks do not know`);
    } else if (entry["valueFrom"] !== undefined) {
      const ref = entry["valueFrom"]["secretKeyRef"] ?? entry["valueFrom"]["configMapKeyRef"];
      const kind = entry["valueFrom"]["secretKeyRef"] ? "Secret" : "ConfigMap";
      const source = named(kind, ref?.["name"]);
      value = source === undefined ? "" : (secretValues(source)[ref["key"]] ?? "");
      if (source === undefined)
        problems.push(`${where}: ${name} reads ${kind} ${ref?.["name"]}, which is not in ${v.dir}`);
    } else {
      value = String(entry["value"] ?? "").replace(/\$\(([A-Za-z_][A-Za-z0-9_]*)\)/g, (whole, ref: string) => {
        const defined = env.get(ref);
        if (defined === undefined) {
          problems.push(
            `${where}: ${name} refers to $(${ref}), which is not defined above it (Kubernetes leaves it as written)`,
          );
          return whole;
        }
        auxiliary.add(ref);
        return defined.value;
      });
    }
    env.set(name, { value, where });
  }
  return { env, auxiliary, problems };
}

/** A ConfigMap's data, or a Secret's stringData and (decoded) data. */
function secretValues(o: K8sObject): Record<string, string> {
  const decoded = Object.fromEntries(
    Object.entries((o["kind"] === "Secret" ? (o["data"] ?? {}) : {}) as Record<string, string>).map(([k, b64]) => [
      k,
      Buffer.from(b64, "base64").toString("utf8"),
    ]),
  );
  return { ...decoded, ...(o["kind"] === "Secret" ? o["stringData"] : o["data"]) };
}

/** A setting spelled nearly so, for the message. */
function suggest(name: string, settings: Set<string>): string {
  const close = [...settings].find((s) => distance(s, name) <= 2);
  return close === undefined ? "" : `; did you mean ${close}?`;
}

function distance(a: string, b: string): number {
  const row = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    let diagonal = row[0]!;
    row[0] = i;
    for (let j = 1; j <= b.length; j++) {
      const next = Math.min(row[j]! + 1, row[j - 1]! + 1, diagonal + (a[i - 1] === b[j - 1] ? 0 : 1));
      diagonal = row[j]!;
      row[j] = next;
    }
  }
  return row[b.length]!;
}

function securityContext(
  pod: K8sObject,
  container: K8sObject,
  user: ImageUser | string,
  at: (key: string, value?: string | number) => string,
): string[] {
  const problems: string[] = [];
  if (typeof user === "string") return [user];
  const podSc = (pod["securityContext"] ?? {}) as K8sObject;
  const sc = (container["securityContext"] ?? {}) as K8sObject;
  const effective = (key: string) => sc[key] ?? podSc[key];
  if (effective("runAsNonRoot") !== true) problems.push(`${at("securityContext")}: runAsNonRoot must be true`);
  if (effective("runAsUser") !== user.uid) {
    problems.push(
      `${at("runAsUser")}: runAsUser is ${effective("runAsUser")}, but the image runs as uid ${user.uid} (${user.where})`,
    );
  }
  const group = effective("runAsGroup");
  if (group !== undefined && group !== user.gid) {
    problems.push(`${at("runAsGroup")}: runAsGroup is ${group}, but the image's group is ${user.gid} (${user.where})`);
  }
  if (podSc["fsGroup"] !== undefined && podSc["fsGroup"] !== user.gid) {
    problems.push(
      `${at("fsGroup")}: fsGroup ${podSc["fsGroup"]} is not the image's group ${user.gid}: volumes would not be writable`,
    );
  }
  if (effective("seccompProfile")?.["type"] !== "RuntimeDefault")
    problems.push(`${at("securityContext")}: seccompProfile must be RuntimeDefault`);
  if (sc["allowPrivilegeEscalation"] !== false)
    problems.push(`${at("securityContext")}: allowPrivilegeEscalation must be false`);
  if (sc["privileged"] === true) problems.push(`${at("privileged")}: the container must not be privileged`);
  if (sc["readOnlyRootFilesystem"] !== true)
    problems.push(`${at("securityContext")}: readOnlyRootFilesystem must be true`);
  if (!(sc["capabilities"]?.["drop"] ?? []).includes("ALL"))
    problems.push(`${at("securityContext")}: capabilities.drop must include ALL`);
  const tmp = mountAt(pod, container, "/tmp");
  if (tmp?.["emptyDir"] === undefined)
    problems.push(`${at("volumeMounts")}: /tmp must be an emptyDir volume (the root filesystem is read-only)`);
  return problems;
}

/** The volume mounted at `path` in the container. */
function mountAt(pod: K8sObject, container: K8sObject, path: string): K8sObject | undefined {
  const mount = ((container["volumeMounts"] ?? []) as K8sObject[]).find((m) => m["mountPath"] === path);
  return ((pod["volumes"] ?? []) as K8sObject[]).find((volume) => volume["name"] === mount?.["name"]);
}

/** SIGTERM drains for SHUTDOWN_GRACE_MS: the pod must be given that, after its preStop pause, before SIGKILL. */
function drain(pod: K8sObject, container: K8sObject, config: Config, at: (key: string) => string): string[] {
  const preStop = container["lifecycle"]?.["preStop"];
  const command = preStop?.["exec"]?.["command"] as string[] | undefined;
  const pauseS = Number(preStop?.["sleep"]?.["seconds"] ?? (command?.[0] === "sleep" ? command[1] : Number.NaN));
  if (!(pauseS >= 1)) {
    return [
      `${at("lifecycle")}: preStop must pause (sleep N) so endpoints drop the pod before SIGTERM closes the port`,
    ];
  }
  const graceS = pod["terminationGracePeriodSeconds"] ?? 30;
  const needMs = pauseS * 1000 + config.server.shutdownGraceMs + AFTER_GRACE_MS;
  if (graceS * 1000 < needMs) {
    return [
      `${at("terminationGracePeriodSeconds")}: terminationGracePeriodSeconds ${graceS} is under the drain: preStop ${pauseS} s + SHUTDOWN_GRACE_MS ${config.server.shutdownGraceMs} ms + ${AFTER_GRACE_MS} ms to flush and close = ${needMs / 1000} s`,
    ];
  }
  return [];
}

/** Requests and limits set, and V8's heap cap (NODE_OPTIONS) well under the memory limit (docs/operations.md, Sizing). */
function resources(
  container: K8sObject,
  env: Map<string, EnvEntry>,
  at: (key: string, value?: string) => string,
): string[] {
  const problems: string[] = [];
  const r = container["resources"] ?? {};
  for (const kind of ["requests", "limits"]) {
    for (const what of ["cpu", "memory"]) {
      if (r[kind]?.[what] === undefined) problems.push(`${at("resources")}: resources.${kind}.${what} is not set`);
    }
  }
  const limit = bytes(r["limits"]?.["memory"]);
  const heapMiB = Number(/--max-old-space-size=(\d+)/.exec(env.get("NODE_OPTIONS")?.value ?? "")?.[1] ?? Number.NaN);
  if (Number.isNaN(heapMiB))
    problems.push(
      `${at("resources")}: NODE_OPTIONS must cap the heap (--max-old-space-size), or V8 grows it past the limit`,
    );
  else if (limit !== undefined && heapMiB * 2 ** 20 > limit * 0.6) {
    problems.push(
      `${env.get("NODE_OPTIONS")!.where}: a heap cap of ${heapMiB} MiB leaves too little of the ${r["limits"]["memory"]} limit outside the heap (keep it at most 60 %)`,
    );
  }
  return problems;
}

function bytes(quantity: unknown): number | undefined {
  const m = /^(\d+(?:\.\d+)?)(Ki|Mi|Gi|K|M|G)?$/.exec(String(quantity ?? ""));
  if (!m) return undefined;
  const unit = { Ki: 2 ** 10, Mi: 2 ** 20, Gi: 2 ** 30, K: 1e3, M: 1e6, G: 1e9 }[m[2] ?? ""] ?? 1;
  return Number(m[1]) * unit;
}

/**
 * More than one replica needs state every replica sees (sessions in Redis,
 * memories in PostgreSQL) and a rollout that keeps serving; a SQLite file is
 * one replica's, on a volume that outlives the pod.
 */
function replicas(
  v: Variant,
  deployment: K8sObject,
  pod: K8sObject,
  container: K8sObject,
  config: Config,
  at: (key: string, value?: string) => string,
): string[] {
  const problems: string[] = [];
  const hpa = v.objects.find((o) => o["kind"] === "HorizontalPodAutoscaler");
  const pdb = v.objects.find((o) => o["kind"] === "PodDisruptionBudget");
  const name = deployment["metadata"]["name"];
  const labels = deployment["spec"]["template"]["metadata"]?.["labels"];
  if (hpa && hpa["spec"]["scaleTargetRef"]?.["name"] !== name)
    problems.push(
      `${at("scaleTargetRef")}: the autoscaler scales ${hpa["spec"]["scaleTargetRef"]?.["name"]}, not ${name}`,
    );
  if (pdb && !matches(pdb["spec"]["selector"]?.["matchLabels"], labels))
    problems.push(`${at("selector")}: the PodDisruptionBudget selects no pod of ${name}`);
  const most = Math.max(deployment["spec"]["replicas"] ?? 1, hpa?.["spec"]["maxReplicas"] ?? 0);
  const strategy = deployment["spec"]["strategy"] ?? {};
  if (most > 1) {
    if (config.memrecall.store.kind !== "postgres")
      problems.push(
        `${at("MEMORY_STORE")}: up to ${most} replicas need MEMORY_STORE=postgres: a SQLite file is one replica's`,
      );
    if (config.sessions.redis === undefined)
      problems.push(
        `${at("kind", "Secret")}: up to ${most} replicas need sessions in Redis (REDIS_URL): a session kept in one replica is unknown to the others`,
      );
    if (strategy["type"] === "Recreate" || strategy["rollingUpdate"]?.["maxUnavailable"] !== 0)
      problems.push(
        `${at("strategy")}: a rollout must start a ready new pod before stopping an old one (RollingUpdate, maxUnavailable: 0)`,
      );
    if (pdb === undefined)
      problems.push(`${at("kind", "Deployment")}: up to ${most} replicas need a PodDisruptionBudget`);
    if (hpa !== undefined && (hpa["spec"]["minReplicas"] ?? 1) < 2)
      problems.push(`${at("minReplicas")}: minReplicas must be at least 2, so a drain or a rollout never leaves none`);
  }
  const store = config.memrecall.store;
  if (store.kind === "sqlite" && store.path !== ":memory:") {
    const volume = mountAt(pod, container, posix.dirname(store.path));
    if (volume?.["persistentVolumeClaim"] === undefined)
      problems.push(
        `${at("SQLITE_PATH")}: ${posix.dirname(store.path)} (SQLITE_PATH's directory) must be mounted from a PersistentVolumeClaim, or memories go with the pod`,
      );
    if (most > 1) problems.push(`${at("replicas")}: SQLite is one writer: one replica, and no autoscaler`);
    if (strategy["type"] !== "Recreate")
      problems.push(
        `${at("strategy")}: with SQLite on a ReadWriteOnce volume the old pod must stop first (strategy Recreate)`,
      );
  }
  return problems;
}

/** Ingress paths the service serves, to a Service port that exists, under a host it answers to, with tokens checked. */
function ingresses(
  v: Variant,
  config: Config,
  served: Served,
  at: (key: string, value?: string | number) => string,
): string[] {
  const problems: string[] = [];
  for (const ingress of v.objects.filter((o) => o["kind"] === "Ingress")) {
    for (const rule of ingress["spec"]["rules"] ?? []) {
      if (rule["host"]) served.hosts.push({ host: rule["host"], where: at("host", rule["host"]) });
      for (const path of rule["http"]?.["paths"] ?? []) {
        const where = at("path", path["path"]);
        if (!(`${path["path"]}/` === PUBLIC_PREFIX || String(path["path"]).startsWith(PUBLIC_PREFIX))) {
          problems.push(
            `${where}: the Ingress exposes ${path["path"]}; expose the public routes (${PUBLIC_PREFIX}) only, the rest trusts identity headers`,
          );
        }
        const backend = path["backend"]?.["service"];
        const service = v.objects.find((o) => o["kind"] === "Service" && o["metadata"]["name"] === backend?.["name"]);
        const port = service?.["spec"]["ports"]?.find(
          (p: K8sObject) => p["name"] === backend?.["port"]?.["name"] || p["port"] === backend?.["port"]?.["number"],
        );
        if (port === undefined)
          problems.push(
            `${where}: the backend ${backend?.["name"]}:${JSON.stringify(backend?.["port"])} is no Service port in ${v.dir}`,
          );
      }
    }
    if (config.auth.mode === "headers") {
      problems.push(
        `${at("AUTH_MODE")}: with an Ingress, AUTH_MODE must check tokens (jwt, introspection): under headers the public routes refuse every call`,
      );
    }
  }
  return problems;
}
