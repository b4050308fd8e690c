import { mkdirSync, writeFileSync } from "node:fs";
import { dirname } from "node:path";
import { parseArgs } from "node:util";
import { DEFAULT_SEED, type GeneratedBundle, generateBundle } from "./generator/build";
import { serializeBundle } from "./generator/serialize";

/**
 * npm run gen:bundle -- [--scale N] [--seed S] [--out PATH]
 *
 * Without --scale: the committed sample, data/kn_medical.bundle.json (the
 * default seed reproduces it byte for byte). With --scale N: about N
 * instances for benchmarks, by default under data/generated/ (git-ignored).
 */

const SAMPLE_PATH = "data/kn_medical.bundle.json";

function main(): void {
  const { values } = parseArgs({
    options: { scale: { type: "string" }, seed: { type: "string" }, out: { type: "string" } },
    strict: true,
  });
  const scale = values.scale === undefined ? undefined : positiveInteger("--scale", values.scale);
  const seed = values.seed === undefined ? DEFAULT_SEED : positiveInteger("--seed", values.seed);
  const out = values.out ?? (scale === undefined ? SAMPLE_PATH : `data/generated/kn_medical_${scale}.json`);

  const started = performance.now();
  const bundle = generateBundle({ seed, scale });
  const text = serializeBundle(bundle);
  mkdirSync(dirname(out), { recursive: true });
  writeFileSync(out, text);
  const seconds = (performance.now() - started) / 1000;
  console.log(summary(bundle, Buffer.byteLength(text), out, seconds));
}

function positiveInteger(flag: string, text: string): number {
  const n = Number(text);
  if (!/^\d+$/u.test(text) || !Number.isSafeInteger(n) || n <= 0) {
    console.error(`${flag} must be a positive integer, got ${JSON.stringify(text)}`);
    process.exit(2);
  }
  return n;
}

/** One line: instances per type, relation pairs, bytes, where and how long. */
function summary(bundle: GeneratedBundle, bytes: number, out: string, seconds: number): string {
  const counts = Object.entries(bundle.objects).map(([type, rows]) => [type, rows.length] as const);
  const instances = counts.reduce((n, [, c]) => n + c, 0);
  const pairs = Object.values(bundle.relations).reduce((n, p) => n + p.length, 0);
  const perType = counts.map(([type, c]) => `${type} ${c}`).join(", ");
  return `${out}: ${instances} instances (${perType}), ${pairs} relation pairs, ${bytes} bytes, ${seconds.toFixed(2)} s`;
}

main();
