import { readdirSync, readFileSync, statSync } from "node:fs";
import { join, relative } from "node:path";
import { fromBinary } from "@bufbuild/protobuf";
import { FileDescriptorSetSchema } from "@bufbuild/protobuf/wkt";
import ts from "typescript";
import { describe, expect, it } from "vitest";

/**
 * Every caller-facing text is written twice, English and Chinese, where it is raised (src/errors/text.ts):
 * `text(en, zh)`, `zodText(en, zh)` or an object literal `{ en, zh }`. This reads every such pair in src/
 * (the platform simulator aside: it stands in for the platform, its words are not ours) and checks each:
 * both present, each in its own language, the same values interpolated in both, and no name of a
 * parameter, tool or RPC this service does not have.
 */

const root = join(import.meta.dirname, "..", "..");
const CJK = /[\u3400-\u9fff\uff00-\uffef\u3000-\u303f]/;

interface Pair {
  where: string;
  en: string;
  zh: string;
  /** The interpolated expressions, as written. */
  enValues: string[];
  zhValues: string[];
}

function sourceFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) return name === "simulator" ? [] : sourceFiles(path);
    return path.endsWith(".ts") ? [path] : [];
  });
}

/** A string or template literal as text with each `${…}` as "{}", and the expressions it interpolates. */
function literal(node: ts.Node, file: ts.SourceFile): { text: string; values: string[] } | undefined {
  if (ts.isStringLiteral(node) || ts.isNoSubstitutionTemplateLiteral(node)) return { text: node.text, values: [] };
  if (ts.isTemplateExpression(node)) {
    const values = node.templateSpans.map((s) => s.expression.getText(file));
    return { text: node.head.text + node.templateSpans.map((s) => `{}${s.literal.text}`).join(""), values };
  }
  if (ts.isBinaryExpression(node) && node.operatorToken.kind === ts.SyntaxKind.PlusToken) {
    const left = literal(node.left, file);
    const right = literal(node.right, file);
    if (left && right) return { text: left.text + right.text, values: [...left.values, ...right.values] };
  }
  return undefined;
}

function pairsIn(path: string): Pair[] {
  const file = ts.createSourceFile(path, readFileSync(path, "utf8"), ts.ScriptTarget.Latest, true);
  const out: Pair[] = [];
  const add = (node: ts.Node, en: ts.Node, zh: ts.Node) => {
    const e = literal(en, file);
    const z = literal(zh, file);
    if (!e || !z) return; // computed from other pairs (joinText, inBoth's branches are literals of their own)
    const { line } = file.getLineAndCharacterOfPosition(node.getStart(file));
    out.push({
      where: `${relative(root, path)}:${line + 1}`,
      en: e.text,
      zh: z.text,
      enValues: e.values,
      zhValues: z.values,
    });
  };
  const visit = (node: ts.Node) => {
    if (ts.isCallExpression(node) && ts.isIdentifier(node.expression)) {
      const name = node.expression.text;
      if ((name === "text" || name === "zodText") && node.arguments.length === 2) {
        add(node, node.arguments[0]!, node.arguments[1]!);
      }
    }
    if (ts.isObjectLiteralExpression(node)) {
      const prop = (key: string) =>
        node.properties.find(
          (p): p is ts.PropertyAssignment => ts.isPropertyAssignment(p) && p.name.getText(file) === key,
        );
      const en = prop("en");
      const zh = prop("zh");
      if (en && zh && node.properties.length === 2) add(node, en.initializer, zh.initializer);
    }
    ts.forEachChild(node, visit);
  };
  visit(file);
  return out;
}

// A pair with no words (a separator, an empty start a loop fills) has nothing to check.
/** Each violation written with its field and description side by side: `{ field: "kn_ids", description: text(…) }`. */
function violationsIn(path: string): { where: string; field: string; en: string; zh: string }[] {
  const file = ts.createSourceFile(path, readFileSync(path, "utf8"), ts.ScriptTarget.Latest, true);
  const out: { where: string; field: string; en: string; zh: string }[] = [];
  const visit = (node: ts.Node) => {
    if (ts.isObjectLiteralExpression(node)) {
      const prop = (key: string) =>
        node.properties.find(
          (p): p is ts.PropertyAssignment => ts.isPropertyAssignment(p) && p.name.getText(file) === key,
        );
      const field = prop("field")?.initializer;
      const description = prop("description")?.initializer;
      if (field && ts.isStringLiteral(field) && description && ts.isCallExpression(description)) {
        const [en, zh] = description.arguments.map((a) => literal(a, file)?.text);
        const { line } = file.getLineAndCharacterOfPosition(node.getStart(file));
        if (en !== undefined && zh !== undefined)
          out.push({ where: `${relative(root, path)}:${line + 1}`, field: field.text, en, zh });
      }
    }
    ts.forEachChild(node, visit);
  };
  visit(file);
  return out;
}

const pairs = sourceFiles(join(root, "src"))
  .flatMap(pairsIn)
  .filter((p) => /[\p{L}]/u.test(p.en.replaceAll("{}", "") + p.zh.replaceAll("{}", "")));

/** Every name the contract has: proto fields, messages, enum values, RPCs and services (descriptors.binpb). */
function contractNames(): Set<string> {
  const set = fromBinary(FileDescriptorSetSchema, readFileSync(join(root, "gen", "descriptors.binpb")));
  const names = new Set<string>();
  const message = (m: { name?: string; field: { name?: string }[]; nestedType: unknown[]; enumType: unknown[] }) => {
    names.add(m.name ?? "");
    for (const f of m.field) names.add(f.name ?? "");
    for (const n of m.nestedType) message(n as typeof m);
    for (const e of m.enumType) for (const v of (e as { value: { name?: string }[] }).value) names.add(v.name ?? "");
  };
  for (const file of set.file) {
    for (const m of file.messageType) message(m as never);
    for (const e of file.enumType) for (const v of e.value) names.add(v.name ?? "");
    for (const s of file.service) {
      names.add(s.name ?? "");
      names.add((s.name ?? "").replace(/Service$/, ""));
      for (const m of s.method) names.add(m.name ?? "");
    }
  }
  return names;
}

/** Names the service has beyond the proto: keys of its own code (REST bodies, MCP tools' arguments), the data's ids. */
function ownNames(): Set<string> {
  const names = new Set<string>();
  for (const path of sourceFiles(join(root, "src"))) {
    for (const m of readFileSync(path, "utf8").matchAll(/["'`]?\b([a-z][a-z0-9]*(?:_[a-z0-9]+)+)\b["'`]?\s*:/g))
      names.add(m[1]!);
    for (const m of readFileSync(path, "utf8").matchAll(/"([a-z][a-z0-9]*(?:_[a-z0-9]+)+)"/g)) names.add(m[1]!);
  }
  for (const m of readFileSync(join(root, "data", "kn_medical.bundle.json"), "utf8").matchAll(
    /"([a-z][a-z0-9]*(?:_[a-z0-9]+)+)"/g,
  )) {
    names.add(m[1]!);
  }
  return names;
}

/**
 * What the original tools called things: not names of this service, except `enable_keyword_context`, a field of
 * our REST alias `POST /tools/knowledge_retrieve` (its texts may name it; no RPC or MCP text may).
 */
const FOREIGN: Record<string, string[]> = {
  enable_keyword_context: ["src/knowledge/rest-routes.ts"],
  knowledge_network_retrieval: [],
};

describe("caller-facing texts in both languages", () => {
  it("finds the texts (the scan reads what it should)", () => {
    expect(pairs.length).toBeGreaterThan(300);
    expect(pairs.some((p) => p.where.startsWith("src/knowledge/keyword-context/errors.ts"))).toBe(true);
  });

  it("has both languages, each in its own: English (Chinese only as a quoted example), Chinese", () => {
    // Chinese in the English is an example of input the service reads (上个月, 天/周/月): it appears in the Chinese too.
    const foreignChinese = (p: Pair) =>
      [...p.en.matchAll(/[\u3400-\u9fff\uff00-\uffef\u3000-\u303f]+/g)].some((m) => !p.zh.includes(m[0]));
    const bad = pairs.filter((p) => !/[A-Za-z]/.test(p.en) || p.en === p.zh || foreignChinese(p) || !CJK.test(p.zh));
    expect(bad.map((p) => `${p.where}: ${p.en} | ${p.zh}`)).toEqual([]);
  });

  it("says the same values in both languages", () => {
    // The same expression read in each language (`why.en` and `why.zh`, a join with "; " and "；") is one value.
    const same = (v: string) =>
      v
        .replace(/"[^"]*"|'[^']*'|`[^`]*`/g, "")
        .replace(/\.(en|zh)\b|\[language\]/g, ".L")
        // A table of the Chinese words for a value (STORE_OPERATIONS[what]) says the value.
        .replace(/\b[A-Z_]+\[(\w+)\]/g, "$1")
        .replace(/\s+/g, "");
    const sorted = (v: string[]) => [...new Set(v.map(same))].sort();
    const bad = pairs.filter((p) => JSON.stringify(sorted(p.enValues)) !== JSON.stringify(sorted(p.zhValues)));
    expect(bad.map((p) => `${p.where}: [${p.enValues}] vs [${p.zhValues}]`)).toEqual([]);
  });

  it("names a violation's field once: beside it, not again at the start of its description", () => {
    const violations = sourceFiles(join(root, "src")).flatMap(violationsIn);
    expect(violations.length).toBeGreaterThan(40);
    const bad = violations.filter((v) => v.en.startsWith(v.field) || v.zh.startsWith(v.field));
    expect(bad.map((v) => `${v.where}: ${v.field}: ${v.en}`)).toEqual([]);
  });

  it("names no parameter, tool or RPC the service does not have", () => {
    const known = new Set([...contractNames(), ...ownNames()]);
    for (const foreign of Object.keys(FOREIGN)) known.delete(foreign);
    const bad: string[] = [];
    for (const p of pairs) {
      const file = p.where.slice(0, p.where.indexOf(":"));
      for (const words of [p.en, p.zh]) {
        for (const m of words.matchAll(/\b[a-z][a-z0-9]*(?:_[a-z0-9]+)+\b/g)) {
          if (!known.has(m[0]) && !FOREIGN[m[0]]?.includes(file)) bad.push(`${p.where}: ${m[0]}`);
        }
        // An RPC-like name (RetrieveSchema, KnSearch): CamelCase words; each must be the contract's.
        for (const m of words.matchAll(/\b[A-Z][a-z]+(?:[A-Z][a-z0-9]*)+\b/g)) {
          if (!known.has(m[0])) bad.push(`${p.where}: ${m[0]}`);
        }
      }
    }
    expect([...new Set(bad)]).toEqual([]);
  });
});
