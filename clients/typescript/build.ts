/**
 * Builds @context-loader/client into dist/: JavaScript (ES2022 modules) and type declarations for
 * src/*.ts and the generated code they import from the repository's gen/ (never edited here).
 * `npm run build` (or `npm pack`, which builds first) in clients/typescript.
 *
 * tsc writes src/x.ts to dist/clients/typescript/src/x.js and gen/… to dist/gen/…; this writes them
 * to dist/x.js and dist/gen/… instead, and gives every relative import a `.js` extension: Node.js and
 * TypeScript's node16/nodenext resolution need it, and gen/ (like src/) imports without one.
 */
import { rmSync } from "node:fs";
import { dirname, join, relative } from "node:path";
import { fileURLToPath } from "node:url";
import ts from "typescript";

const here = dirname(fileURLToPath(import.meta.url));
const repo = join(here, "..", "..");
const out = join(here, "dist");
const entries = ["index.ts", "node.ts", "web.ts"].map((f) => join(here, "src", f));

const options: ts.CompilerOptions = {
  target: ts.ScriptTarget.ES2022,
  module: ts.ModuleKind.ESNext,
  moduleResolution: ts.ModuleResolutionKind.Bundler,
  lib: ["lib.es2023.d.ts", "lib.dom.d.ts"],
  types: ["node"],
  strict: true,
  declaration: true,
  skipLibCheck: true,
  isolatedModules: true,
  verbatimModuleSyntax: true,
  rootDir: repo,
  outDir: out,
};

/** Where tsc would write `file`, relative to dist/, mapped to where the package has it. */
function packagePath(file: string): string {
  const rel = relative(out, file);
  const fromSrc = join("clients", "typescript", "src");
  if (rel.startsWith(`${fromSrc}/`)) return rel.slice(fromSrc.length + 1);
  if (rel.startsWith("gen/")) return rel;
  throw new Error(`unexpected output ${rel}: the package holds src/ and gen/ only`);
}

/** `from "./x"` → `from "./x.js"`, and src/'s `../../../gen/` → `./gen/` (where dist/ has it). */
function rewriteImports(text: string, fromSrc: boolean): string {
  return text.replace(
    /(\bfrom\s*|\bimport\s*\(\s*|\bimport\s+)(["'])(\.\.?\/[^"']*)\2/g,
    (_all, head: string, quote: string, spec: string) => {
      const moved = fromSrc && spec.startsWith("../../../gen/") ? `./${spec.slice("../../../".length)}` : spec;
      return `${head}${quote}${moved.endsWith(".js") ? moved : `${moved}.js`}${quote}`;
    },
  );
}

rmSync(out, { recursive: true, force: true });
const program = ts.createProgram(entries, options);
const written: string[] = [];
const emitted = program.emit(undefined, (file, text) => {
  const target = packagePath(file);
  ts.sys.writeFile(join(out, target), rewriteImports(text, !target.startsWith("gen/")));
  written.push(target);
});
const diagnostics = [...ts.getPreEmitDiagnostics(program), ...emitted.diagnostics];
if (diagnostics.length > 0) {
  const host = { getCanonicalFileName: (f: string) => f, getCurrentDirectory: () => repo, getNewLine: () => "\n" };
  process.stderr.write(ts.formatDiagnostics(diagnostics, host));
  process.exit(1);
}
console.log(`built ${written.length} files into ${relative(process.cwd(), out) || "."}`);
