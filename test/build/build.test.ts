import { execFileSync, spawn } from "node:child_process";
import { mkdirSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { builtinModules } from "node:module";
import { tmpdir } from "node:os";
import { join, relative } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { freePort } from "../helpers/processes";
import { type ServiceProcess, startServiceProcess } from "../helpers/service-process";

/**
 * `npm run build` (issue 32): the compiled service is what `npm start` and the image run, with only
 * the production install beside it. Built here into a directory of its own (inside the repository,
 * as dist/ is, so that it finds package.json, data/ and gen/ above it).
 */
const root = fileURLToPath(new URL("../..", import.meta.url));
const outdir = join(root, "test", ".artifacts", `build-${process.pid}`);
const pkg = JSON.parse(readFileSync(join(root, "package.json"), "utf8")) as {
  dependencies: Record<string, string>;
  devDependencies: Record<string, string>;
};

interface Metafile {
  inputs: Record<string, { imports: { path: string; external?: boolean }[] }>;
}

/** The package a bare import names: `@scope/name` or `name`, without a subpath. */
function packageOf(specifier: string): string {
  const parts = specifier.split("/");
  return specifier.startsWith("@") ? parts.slice(0, 2).join("/") : parts[0]!;
}

let meta: Metafile;
let service: ServiceProcess | undefined;

beforeAll(() => {
  mkdirSync(outdir, { recursive: true });
  // The build script itself, with the output directory and a metafile added (esbuild takes the last --outdir).
  execFileSync("npm", ["run", "-s", "build", "--", `--outdir=${outdir}`, `--metafile=${join(outdir, "meta.json")}`], {
    cwd: root,
    stdio: ["ignore", "ignore", "inherit"],
  });
  meta = JSON.parse(readFileSync(join(outdir, "meta.json"), "utf8")) as Metafile;
});

afterAll(async () => {
  await service?.destroy();
  rmSync(outdir, { recursive: true, force: true });
});

describe("the compiled build", () => {
  it("imports nothing but Node's modules and production dependencies: `npm ci --omit=dev` is enough to run it", () => {
    const builtins = new Set(builtinModules);
    const problems: string[] = [];
    for (const [file, input] of Object.entries(meta.inputs)) {
      for (const imported of input.imports) {
        if (!imported.external || imported.path.startsWith("node:") || builtins.has(imported.path)) continue;
        const name = packageOf(imported.path);
        if (name in pkg.dependencies) continue;
        const why = name in pkg.devDependencies ? "a devDependency" : "not in package.json";
        problems.push(`${file} imports ${imported.path}: ${name} is ${why}`);
      }
    }
    expect(problems).toEqual([]);
    // The check sees the service's real imports (a build that bundled them would pass it vacuously).
    const externals = Object.values(meta.inputs).flatMap((i) => i.imports.filter((x) => x.external).map((x) => x.path));
    expect(externals).toContain("better-sqlite3");
  });

  it("starts under plain node from its build directory, finds data/ and gen/, and serves a search that needs the lexicon", async () => {
    service = await startServiceProcess({}, join(outdir, "main.js"));
    const ready = await fetch(`${service.baseUrl}/readyz`);
    expect(ready.status).toBe(200);
    // Every line it wrote says where the sample network came from: data/ of this package, not of the build directory.
    const bundles = service.lines.find((l) => Array.isArray(l["bundles"]))?.["bundles"] as string[];
    expect(bundles.map((b) => relative(root, b))).toEqual([join("data", "kn_medical.bundle.json")]);

    const res = await fetch(`${service.baseUrl}/contextloader.memrecall.v1.MemRecallService/SearchMemories`, {
      method: "POST",
      headers: { "content-type": "application/json", "x-account-id": "build-test" },
      body: JSON.stringify({ query: "database settings", search_mode: "keyword" }),
    });
    expect(res.status).toBe(200);
    await expect.poll(() => service!.lines.map((l) => l["msg"])).toContain("lexicon loaded");
  });

  it("writes source maps beside the code", () => {
    const main = readFileSync(join(outdir, "main.js"), "utf8");
    expect(main).toMatch(/\/\/# sourceMappingURL=main\.js\.map\s*$/);
    const map = JSON.parse(readFileSync(join(outdir, "main.js.map"), "utf8")) as { sources: string[] };
    expect(map.sources.some((s) => s.endsWith("src/main.ts"))).toBe(true);
  });

  it("`npm start` stops, drained, when its own pid gets SIGTERM, as a supervisor sends it (issue 32: tsx kept serving)", async () => {
    const dir = mkdtempSync(join(tmpdir(), "npm-start-"));
    const port = await freePort();
    const npm = spawn("npm", ["start", "--silent"], {
      cwd: root,
      env: {
        ...process.env,
        PORT: String(port),
        HOST: "127.0.0.1",
        LOG_LEVEL: "info",
        SQLITE_PATH: join(dir, "m.sqlite"),
      },
      stdio: ["ignore", "pipe", "inherit"],
    });
    let out = "";
    npm.stdout!.on("data", (chunk: Buffer) => (out += chunk.toString()));
    const exited = new Promise<number | null>((resolve) => npm.once("exit", (code) => resolve(code)));
    let served: number[] = [];
    try {
      await expect
        .poll(
          () =>
            fetch(`http://127.0.0.1:${port}/readyz`).then(
              (r) => r.status,
              () => 0,
            ),
          { timeout: 60_000, interval: 200 },
        )
        .toBe(200);
      // npm's descendants (the service, exec'd by npm's shell), so that a failed test does not leave one running.
      served = descendantsOf(npm.pid!);
      npm.kill("SIGTERM");
      expect(await exited).toBe(0);
      expect(out).toContain('"msg":"stopped"');
      // Nothing listens any more: the service itself ended, not only npm.
      await expect(fetch(`http://127.0.0.1:${port}/healthz`)).rejects.toThrow();
    } finally {
      if (npm.exitCode === null) npm.kill("SIGKILL");
      for (const pid of served) {
        try {
          process.kill(pid, "SIGKILL");
        } catch {
          // Already ended, as it should have.
        }
      }
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

function descendantsOf(pid: number): number[] {
  const children = readFileSync(`/proc/${pid}/task/${pid}/children`, "utf8").trim().split(/\s+/).filter(Boolean);
  return children.map(Number).flatMap((c) => [c, ...descendantsOf(c)]);
}
