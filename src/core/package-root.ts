import { existsSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

/**
 * The directory of the nearest package.json above this module, where data/, gen/ and
 * package.json itself are read from. Found by looking rather than by a fixed `../`: the
 * module runs as src/core/package-root.ts under tsx and bundled into dist/main.js (or any other
 * build directory) by `npm run build`, at different depths below the package.
 */
export const PACKAGE_ROOT = findPackageRoot(dirname(fileURLToPath(import.meta.url)));

/** The absolute path of `relative` (slash-separated) inside the package. */
export function packagePath(relative: string): string {
  return join(PACKAGE_ROOT, ...relative.split("/"));
}

function findPackageRoot(from: string): string {
  for (let dir = from; ; dir = dirname(dir)) {
    if (existsSync(join(dir, "package.json"))) return dir;
    if (dirname(dir) === dir) throw new Error(`no package.json in ${from} or any directory above it`);
  }
}
