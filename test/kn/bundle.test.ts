import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { BundleError, loadBundleFile, parseBundle } from "../../src/kn/embedded/bundle";
import { EmbeddedBackend } from "../../src/kn/embedded/engine";

const dir = mkdtempSync(join(tmpdir(), "cl-bundle-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const minimal = {
  knowledge_network: { id: "kn_x" },
  object_types: [
    {
      id: "thing",
      primary_keys: ["id"],
      display_key: "name",
      data_properties: [{ name: "id" }, { name: "name" }, { name: "size", type: "int" }],
    },
  ],
};

function write(name: string, content: string): string {
  const path = join(dir, name);
  writeFileSync(path, content);
  return path;
}

describe("KN bundle loading", () => {
  it("fills missing optional sections with empty ones and ignores unknown fields", () => {
    const b = parseBundle({ ...minimal, vendor_extension: { anything: true } }, "inline");
    expect(b.relation_types).toEqual([]);
    expect(b.objects).toEqual({});
    expect(b.metrics).toEqual({});
    expect(b.object_types[0]?.data_properties[0]).toMatchObject({ name: "id", type: "varchar", display_name: "" });
  });

  it.each([
    ["not JSON", "{oops", /not valid JSON/],
    [
      "no primary key",
      JSON.stringify({ ...minimal, object_types: [{ ...minimal.object_types[0], primary_keys: [] }] }),
      /object_types\.0\.primary_keys: an object type needs at least one primary key/,
    ],
    [
      "a display key that is no property",
      JSON.stringify({ ...minimal, object_types: [{ ...minimal.object_types[0], display_key: "title" }] }),
      /display_key title is not a data property/,
    ],
    [
      "a relation to an unknown type",
      JSON.stringify({
        ...minimal,
        relation_types: [{ id: "r", source_object_type_id: "thing", target_object_type_id: "ghost" }],
      }),
      /relation type r: unknown object type ghost/,
    ],
    [
      "objects of an unknown type",
      JSON.stringify({ ...minimal, objects: { ghost: [] } }),
      /objects: unknown object type ghost/,
    ],
  ])("stops with a message naming the file and the problem: %s", (_case, content, message) => {
    const path = write(`${_case.replace(/\W+/g, "_")}.json`, content);
    expect(() => loadBundleFile(path)).toThrow(BundleError);
    expect(() => loadBundleFile(path)).toThrow(
      new RegExp(`KN bundle ${path.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")}: .*${message.source}`),
    );
  });

  it("names a file that cannot be read", () => {
    expect(() => loadBundleFile(join(dir, "missing.json"))).toThrow(/KN bundle .*missing\.json: cannot read it/);
  });

  it("refuses a relation pair naming an instance that does not exist", () => {
    const bundle = parseBundle(
      {
        ...minimal,
        relation_types: [{ id: "near", source_object_type_id: "thing", target_object_type_id: "thing" }],
        objects: { thing: [{ id: "a", name: "A" }] },
        relations: { near: [["a", "b"]] },
      },
      "inline",
    );
    expect(() => new EmbeddedBackend([bundle], { timeZone: "UTC" })).toThrow(
      /KN bundle bundle #1: relation near: pair \["a","b"\] names an instance that does not exist/,
    );
  });

  it("refuses two bundles of the same knowledge network", () => {
    const b = parseBundle(minimal, "inline");
    expect(() => new EmbeddedBackend([b, b], { timeZone: "UTC" })).toThrow(BundleError);
  });

  it("reports the operations each property allows: declared ones, else its type's defaults", async () => {
    const engine = new EmbeddedBackend([parseBundle(minimal, "inline")], { timeZone: "UTC" });
    const signal = new AbortController().signal;
    const ctx = {
      caller: { accountId: "", accountType: "user" as const },
      traceId: "t",
      language: "en" as const,
      log: (await import("pino")).pino({ level: "silent" }),
      signal,
      remainingMs: () => undefined,
    };
    const [thing] = await engine.getObjectTypes(ctx, "kn_x", ["thing"]);
    const ops = Object.fromEntries(thing!.data_properties.map((p) => [p.name, p.condition_operations]));
    expect(ops["name"]).toEqual(["==", "!=", "in", "not_in", "like", "not_like", "regex", "exist", "not_exist"]);
    expect(ops["size"]).toContain("range");
  });
});
