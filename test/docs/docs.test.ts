import { existsSync, readdirSync, readFileSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";

/** The docs stay true to the code: links lead somewhere, every setting is documented, the README stays short. */
const ROOT = fileURLToPath(new URL("../..", import.meta.url));
const DOCS = join(ROOT, "docs");

function markdownFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
    e.isDirectory() ? markdownFiles(join(dir, e.name)) : e.name.endsWith(".md") ? [join(dir, e.name)] : [],
  );
}

const pages = [join(ROOT, "README.md"), ...markdownFiles(DOCS)];
const read = (file: string) => readFileSync(file, "utf8");

/** Text outside fenced code blocks, where links and headings are markdown. */
function prose(text: string): string {
  return text.replace(/^```[\s\S]*?^```/gm, "");
}

/** GitHub's anchors for a page's headings (lower case, punctuation dropped, spaces to "-", repeats numbered). */
function anchors(file: string): Set<string> {
  const seen = new Map<string, number>();
  const out = new Set<string>();
  for (const [, title] of prose(read(file)).matchAll(/^#{1,6} (.+)$/gm)) {
    const slug = title!
      .trim()
      .toLowerCase()
      .replace(/[^\p{L}\p{N}\s_-]/gu, "")
      .replace(/ /g, "-");
    const n = seen.get(slug) ?? 0;
    seen.set(slug, n + 1);
    out.add(n === 0 ? slug : `${slug}-${n}`);
  }
  return out;
}

describe("the docs", () => {
  it("has a short README and a page per topic", () => {
    expect(Buffer.byteLength(read(join(ROOT, "README.md")))).toBeLessThanOrEqual(15_000);
    expect(markdownFiles(DOCS).length).toBeGreaterThanOrEqual(6);
  });

  it("links only to files and headings that exist", () => {
    const broken: string[] = [];
    for (const page of pages) {
      for (const [, target] of prose(read(page)).matchAll(/\]\(([^)\s]+)\)/g)) {
        if (/^[a-z]+:/.test(target!)) continue;
        const [path, anchor] = target!.split("#", 2) as [string, string | undefined];
        const file = path === "" ? page : resolve(dirname(page), path);
        const where = `${relative(ROOT, page)} -> ${target}`;
        if (!existsSync(file)) broken.push(`${where} (no such file)`);
        else if (anchor !== undefined && file.endsWith(".md") && !anchors(file).has(anchor))
          broken.push(`${where} (no such heading)`);
      }
    }
    expect(broken).toEqual([]);
  });

  it("documents every setting the service reads", () => {
    const config = read(join(ROOT, "src/config.ts"));
    const schema = config.slice(config.indexOf("const envSchema"), config.indexOf("type Env ="));
    const names = [...schema.matchAll(/^ {2}([A-Z][A-Z0-9_]+):/gm)].map((m) => m[1]!);
    expect(names.length).toBeGreaterThan(40);
    const documented = read(join(DOCS, "configuration.md"));
    expect(names.filter((n) => !documented.includes(`\`${n}\``))).toEqual([]);
  });

  it("shows buf curl first and names grpcurl at most three times", () => {
    const mentions = pages.reduce((n, page) => n + (read(page).match(/grpcurl/g) ?? []).length, 0);
    expect(mentions).toBeLessThanOrEqual(3);
  });
});
