import { readdirSync, readFileSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";

/**
 * The layout's rules, checked on every file of src/ (docs/internals.md, "Architecture"):
 * dependencies point inward, the features never import one another, and only
 * the transport edge knows connect-es.
 */
const SRC = fileURLToPath(new URL("../../src", import.meta.url));

/** Layer of each folder: a file may import its own folder and lower layers only. */
const LAYER: Record<string, number> = {
  core: 0,
  errors: 1,
  upstream: 2,
  kn: 3,
  store: 3,
  server: 3,
  knowledge: 4,
  resolver: 4,
  memrecall: 4,
  mcp: 5,
};
/** The top: the composition root and the simulator (a second program) may import everything. */
const TOP = 9;

function filesUnder(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
    e.isDirectory() ? filesUnder(join(dir, e.name)) : e.name.endsWith(".ts") ? [join(dir, e.name)] : [],
  );
}

/** The folder a src file belongs to ("" for a top-level file). */
function folderOf(file: string): string {
  const rel = relative(SRC, file);
  return rel.includes("/") ? rel.split("/")[0]! : "";
}

function layerOf(file: string): number {
  return LAYER[folderOf(file)] ?? TOP;
}

interface Import {
  from: string;
  to: string;
  spec: string;
}

const files = filesUnder(SRC);
const imports: Import[] = files.flatMap((from) =>
  [...readFileSync(from, "utf8").matchAll(/^(?:import|export)[^"';]*?from\s+"([^"]+)"/gm)].map((m) => {
    const spec = m[1]!;
    return { from, spec, to: spec.startsWith(".") ? `${resolve(dirname(from), spec)}.ts` : spec };
  }),
);
const local = imports.filter((i) => i.spec.startsWith(".") && i.to.startsWith(SRC));
const show = (i: Import) => `${relative(SRC, i.from)} -> ${relative(SRC, i.to)}`;

describe("the layout of src/", () => {
  it("finds the files and their imports (the checks below are not vacuous)", () => {
    expect(files.length).toBeGreaterThan(80);
    expect(local.length).toBeGreaterThan(300);
    for (const folder of Object.keys(LAYER)) expect(files.some((f) => folderOf(f) === folder)).toBe(true);
  });

  it("has every import point inward: to the file's own folder or a lower layer", () => {
    const outward = local.filter(
      (i) => layerOf(i.from) !== TOP && folderOf(i.from) !== folderOf(i.to) && layerOf(i.to) >= layerOf(i.from),
    );
    expect(outward.map(show)).toEqual([]);
  });

  it("keeps the three features apart: knowledge, resolver and memrecall never import one another", () => {
    const features = new Set(["knowledge", "resolver", "memrecall"]);
    const across = local.filter(
      (i) => features.has(folderOf(i.from)) && features.has(folderOf(i.to)) && folderOf(i.from) !== folderOf(i.to),
    );
    expect(across.map(show)).toEqual([]);
  });

  it("lets only the transport edge import @connectrpc: handlers (*-service.ts), server/, the error mapping and the composition root", () => {
    const allowed = (file: string) =>
      /-service\.ts$/.test(file) ||
      folderOf(file) === "server" ||
      file.endsWith("errors/connect-mapping.ts") ||
      layerOf(file) === TOP;
    const leaks = imports.filter((i) => i.spec.startsWith("@connectrpc/") && !allowed(i.from));
    expect(leaks.map((i) => `${relative(SRC, i.from)} -> ${i.spec}`)).toEqual([]);
  });

  it("has no import cycle between files", () => {
    const edges = new Map<string, string[]>();
    for (const i of local) edges.set(i.from, [...(edges.get(i.from) ?? []), i.to]);
    const state = new Map<string, "open" | "done">();
    const cycles: string[] = [];
    const visit = (f: string, path: string[]) => {
      if (state.get(f) === "done") return;
      if (state.get(f) === "open") {
        cycles.push([...path.slice(path.indexOf(f)), f].map((p) => relative(SRC, p)).join(" -> "));
        return;
      }
      state.set(f, "open");
      for (const t of edges.get(f) ?? []) visit(t, [...path, f]);
      state.set(f, "done");
    };
    for (const f of files) visit(f, []);
    expect(cycles).toEqual([]);
  });
});
