import { posix } from "node:path";
import { type Document, isPair, isScalar, LineCounter, parseAllDocuments, visit } from "yaml";

/**
 * The manifests under deploy/kubernetes, read as kustomize reads them, for
 * test/deploy/manifests.test.ts: the files as text (so a test can change one
 * and see the checks fail), each YAML document with its line numbers, and
 * each kustomization rendered to the objects `kubectl apply -k` would send.
 *
 * The renderer covers what these manifests use — resources (files and
 * directories), patches (strategic merge, `$patch: delete`, JSON 6902 with a
 * target) and images — and refuses any other kustomization field, so a
 * manifest cannot silently mean more than the checks saw. Where kubectl is
 * installed, the test compares this rendering with `kubectl kustomize`.
 */

/** Relative path (posix, from the repository root) → text. */
export type Files = ReadonlyMap<string, string>;

/** A Kubernetes object, as parsed. */
// biome-ignore lint/suspicious/noExplicitAny: manifests are arbitrary YAML, checked field by field.
export type K8sObject = Record<string, any>;

/** One YAML document of one file. */
export interface SourceDoc {
  file: string;
  doc: Document.Parsed;
  value: unknown;
  lines: LineCounter;
}

/** One kustomization, rendered. */
export interface Variant {
  /** The directory of its kustomization.yaml. */
  dir: string;
  objects: K8sObject[];
  /** Every document that went into it, patches first (they win, so they are where a value was set). */
  sources: SourceDoc[];
}

/** A manifest that cannot be read or rendered; the message starts with file:line. */
export class ManifestError extends Error {
  override name = "ManifestError";
}

const KUSTOMIZATION = "kustomization.yaml";
const KUSTOMIZATION_FIELDS = new Set(["apiVersion", "kind", "resources", "patches", "images"]);

/** Parses every YAML document of a file; a syntax error is a ManifestError naming its line. */
export function parseFile(files: Files, file: string): SourceDoc[] {
  const text = files.get(file);
  if (text === undefined) throw new ManifestError(`${file}: no such file`);
  const lines = new LineCounter();
  const docs = parseAllDocuments(text, { lineCounter: lines });
  if (!Array.isArray(docs)) return [];
  return docs.flatMap((doc) => {
    const [error] = doc.errors;
    if (error) throw new ManifestError(`${file}:${error.linePos?.[0].line ?? 1}: ${error.message.split("\n")[0]}`);
    const value = doc.toJS();
    return value === null || value === undefined ? [] : [{ file, doc, value, lines }];
  });
}

/**
 * Where a key (with this value, when given; below a key named `within`, when
 * given) is written in these documents, as file:line; the first document that
 * has it wins. Undefined when none has it.
 */
export function locate(
  sources: readonly SourceDoc[],
  key: string,
  value?: string | number,
  within?: string,
): string | undefined {
  for (const source of sources) {
    let found: number | undefined;
    visit(source.doc, {
      Pair(_key, pair, path) {
        if (!isScalar(pair.key) || pair.key.value !== key) return;
        if (value !== undefined && !(isScalar(pair.value) && String(pair.value.value) === String(value))) return;
        if (within !== undefined && !path.some((p) => isPair(p) && isScalar(p.key) && p.key.value === within)) return;
        found = pair.key.range?.[0];
        return visit.BREAK;
      },
    });
    if (found !== undefined) return `${source.file}:${source.lines.linePos(found).line}`;
  }
  return undefined;
}

/** Renders the kustomization in `dir`: its resources, then its patches and images applied. */
export function render(files: Files, dir: string): Variant {
  const kfile = posix.join(dir, KUSTOMIZATION);
  const [k] = parseFile(files, kfile);
  const spec = (k?.value ?? {}) as K8sObject;
  const at = (field: string) => locate(k ? [k] : [], field) ?? `${kfile}:1`;
  for (const field of Object.keys(spec)) {
    if (!KUSTOMIZATION_FIELDS.has(field)) {
      throw new ManifestError(
        `${at(field)}: "${field}" is not read by test/deploy/kustomize.ts; teach it there, or the checks would not see what it does`,
      );
    }
  }
  const objects: K8sObject[] = [];
  const resourceSources: SourceDoc[] = [];
  for (const resource of (spec["resources"] ?? []) as string[]) {
    const path = posix.normalize(posix.join(dir, resource));
    if (files.has(posix.join(path, KUSTOMIZATION))) {
      const inner = render(files, path);
      objects.push(...inner.objects);
      resourceSources.push(...inner.sources);
    } else if (files.has(path)) {
      for (const source of parseFile(files, path)) {
        objects.push(structuredClone(source.value) as K8sObject);
        resourceSources.push(source);
      }
    } else {
      throw new ManifestError(
        `${locate(k ? [k] : [], "resources") ?? kfile}: ${resource} is neither a file nor a kustomization`,
      );
    }
  }
  const patchSources: SourceDoc[] = [];
  for (const patch of (spec["patches"] ?? []) as { path?: string; target?: { kind?: string; name?: string } }[]) {
    if (patch.path === undefined) throw new ManifestError(`${at("patches")}: only patches with a path are read`);
    const path = posix.normalize(posix.join(dir, patch.path));
    if (!files.has(path)) throw new ManifestError(`${at("path")}: ${patch.path}: no such file`);
    for (const source of parseFile(files, path)) {
      patchSources.unshift(source);
      if (Array.isArray(source.value)) applyJsonPatch(objects, source, patch.target);
      else applyMergePatch(objects, source);
    }
  }
  for (const image of (spec["images"] ?? []) as { name: string; newName?: string; newTag?: string }[]) {
    for (const container of objects.flatMap(containersOf)) {
      const [name, tag] = splitImage(container["image"]);
      if (name === image.name)
        container["image"] = `${image.newName ?? name}${image.newTag ? `:${image.newTag}` : tag}`;
    }
  }
  return { dir, objects, sources: [...patchSources, ...resourceSources] };
}

/** The containers of a Deployment (none of anything else). */
export function containersOf(object: K8sObject): K8sObject[] {
  return object["kind"] === "Deployment" ? (object["spec"]?.["template"]?.["spec"]?.["containers"] ?? []) : [];
}

function splitImage(image: string): [string, string] {
  const at = image.search(/[:@][^/]*$/);
  return at === -1 ? [image, ""] : [image.slice(0, at), image.slice(at)];
}

function targetOf(objects: K8sObject[], kind: unknown, name: unknown, where: string): number {
  const i = objects.findIndex((o) => o["kind"] === kind && o["metadata"]?.["name"] === name);
  if (i === -1)
    throw new ManifestError(`${where}: the patch's target ${String(kind)} ${String(name)} is not among the resources`);
  return i;
}

/** A strategic merge patch, or `$patch: delete` of a whole object. */
function applyMergePatch(objects: K8sObject[], source: SourceDoc): void {
  const patch = source.value as K8sObject;
  const where = `${source.file}:${source.lines.linePos(source.doc.contents?.range[0] ?? 0).line}`;
  const i = targetOf(objects, patch["kind"], patch["metadata"]?.["name"], where);
  if (patch["$patch"] === "delete") objects.splice(i, 1);
  else objects[i] = merge(objects[i], patch, "") as K8sObject;
}

/**
 * kustomize's strategic merge as these manifests need it: maps merge, null
 * removes a key, lists of named items (volumeMounts by mountPath, ports by
 * containerPort) merge item by item — the patch's items first, then the others,
 * as kustomize orders them — and any other list is replaced.
 */
function merge(base: unknown, patch: unknown, key: string): unknown {
  if (isObject(base) && isObject(patch)) {
    const out: K8sObject = { ...base };
    for (const [k, v] of Object.entries(patch)) {
      if (v === null) delete out[k];
      else out[k] = merge(base[k], v, k);
    }
    return out;
  }
  const mergeKey = key === "volumeMounts" ? "mountPath" : key === "ports" ? "containerPort" : "name";
  if (Array.isArray(base) && Array.isArray(patch) && [...base, ...patch].every((x) => isObject(x) && mergeKey in x)) {
    const patched = patch.map((p) => {
      const original = base.find((b) => b[mergeKey] === p[mergeKey]);
      return original === undefined ? p : merge(original, p, "");
    });
    const kept = base.filter((b) => !patch.some((p) => p[mergeKey] === b[mergeKey]));
    return [...patched, ...kept];
  }
  return structuredClone(patch);
}

function isObject(x: unknown): x is K8sObject {
  return typeof x === "object" && x !== null && !Array.isArray(x);
}

/** RFC 6902 operations (test, replace, add, remove) on the target object. */
function applyJsonPatch(
  objects: K8sObject[],
  source: SourceDoc,
  target: { kind?: string; name?: string } | undefined,
): void {
  const where = `${source.file}:1`;
  if (target === undefined) throw new ManifestError(`${where}: a JSON patch needs a target in its kustomization`);
  const object = objects[targetOf(objects, target.kind, target.name, where)]!;
  (source.value as { op: string; path: string; value?: unknown }[]).forEach((op, n) => {
    const line = opLine(source, n);
    const keys = op.path
      .split("/")
      .slice(1)
      .map((s) => s.replace(/~1/g, "/").replace(/~0/g, "~"));
    const last = keys.pop()!;
    let parent: K8sObject | undefined = object;
    for (const k of keys) parent = parent?.[k];
    if (parent === undefined || (op.op !== "add" && !(last in parent))) {
      throw new ManifestError(`${line}: ${op.path} is not in ${target.kind} ${target.name}`);
    }
    if (op.op === "test") {
      if (JSON.stringify(parent[last]) !== JSON.stringify(op.value)) {
        throw new ManifestError(
          `${line}: ${op.path} is ${JSON.stringify(parent[last])}, not ${JSON.stringify(op.value)}: the patch no longer fits ${target.kind} ${target.name}`,
        );
      }
    } else if (op.op === "replace" || op.op === "add") {
      if (Array.isArray(parent) && op.op === "add")
        parent.splice(last === "-" ? parent.length : Number(last), 0, op.value);
      else (parent as K8sObject)[last] = structuredClone(op.value);
    } else if (op.op === "remove") {
      if (Array.isArray(parent)) parent.splice(Number(last), 1);
      else delete (parent as K8sObject)[last];
    } else throw new ManifestError(`${line}: the operation "${op.op}" is not read by test/deploy/kustomize.ts`);
  });
}

/** The line of the n-th item of a JSON patch. */
function opLine(source: SourceDoc, n: number): string {
  const items = (source.doc.contents as { items?: { range?: [number] }[] } | null)?.items;
  return `${source.file}:${source.lines.linePos(items?.[n]?.range?.[0] ?? 0).line}`;
}
