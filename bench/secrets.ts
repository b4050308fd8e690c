import { randomUUID } from "node:crypto";
import { readFileSync } from "node:fs";
import { z } from "zod";
import { loadConfig } from "../src/config";
import type { MemRecallDeps } from "../src/memrecall/memories-deps";
import { ownerOf } from "../src/memrecall/owner";
import { rememberInput } from "../src/memrecall/remember/input";
import { rememberConversation } from "../src/memrecall/remember/remember";
import { findSecrets } from "../src/memrecall/remember/secrets";
import { SqliteMemoryStore } from "../src/store/memories/sqlite-memory-store";
import { type BenchSetup, benchContext, benchDeps, benchSetup, benchLog as log } from "./memrecall-deps";
import { line } from "./stats";

const labelledSet = z.object({
  items: z.array(
    z.object({
      id: z.string(),
      class: z.enum(["provider-format", "statement-en", "statement-zh", "negative"]),
      message: z.string(),
      secrets: z.array(z.string()),
    }),
  ),
});
type Item = z.output<typeof labelledSet>["items"][number];

/** The development set (tuned on), the held-out set (written with it, before the scanner changed) and a second one written blind by someone who never read the scanner; neither held-out set is tuned on. */
const SETS = {
  development: { file: "./secrets-dev.json", series: "development set" },
  heldOut: { file: "./secrets-holdout.json", series: "held-out set" },
  heldOut2: { file: "./secrets-holdout-2.json", series: "held-out set 2 (blind)" },
} as const;

const CLASSES = ["provider-format", "statement-en", "statement-zh", "negative"] as const;

/** What the scanner found against the labels, over some items. */
interface ScanTally {
  items: number;
  /** Spans the scanner found, and those overlapping a labelled secret. */
  found: number;
  foundRight: number;
  /** Labelled secrets, and those a found span holds whole. */
  expected: number;
  covered: number;
  /** Items holding no secret where the scanner found one. */
  falseAlarms: number;
}

/** What RememberConversation (rules mode) did with each labelled secret, over some items. */
interface EndToEndTally {
  items: number;
  expected: number;
  /** In the content of a sensitive memory, and nowhere a caller without the scope sees or searches. */
  keptSensitive: number;
  /**
   * In a summary, a keyword, a reason, or a non-sensitive memory's content. (A sensitive memory is
   * indexed by its summary and keywords only (write.ts), so one not there cannot be searched for.)
   */
  leaked: number;
  /** Items holding no secret that were stored as a sensitive memory. */
  falseSensitive: number;
}

/**
 * The secret scanner (src/memrecall/remember/secrets.ts) on the labelled chat
 * messages of bench/secrets-dev.json and bench/secrets-holdout.json (issue 31):
 * per class (provider formats, English and Chinese statements, negatives),
 * precision (found spans that overlap a labelled secret) and recall (labelled
 * secrets a found span holds whole), and the negatives it flags. Then each
 * message through RememberConversation in rules mode: each labelled secret
 * kept only in a sensitive memory's content, or leaked to what a caller
 * without the sensitive scope sees or searches (summary, keywords, reason, a
 * non-sensitive memory).
 * `BENCH_SECRETS_VERBOSE=1` lists the development set's misses (never the held-out set's).
 */
export async function benchSecrets(): Promise<void> {
  const setup = await benchSetup(loadConfig({}));
  try {
    await secretsQuality(setup);
  } finally {
    await setup.close();
  }
}

async function secretsQuality(setup: BenchSetup): Promise<void> {
  for (const name of ["development", "heldOut", "heldOut2"] as const) {
    const set = labelledSet.parse(JSON.parse(readFileSync(new URL(SETS[name].file, import.meta.url), "utf8")));
    const scan = new Map(CLASSES.map((c) => [c, emptyScan()]));
    for (const item of set.items) tallyScan(scan.get(item.class)!, item, name === "development");
    const all = sumScan([...scan.values()]);
    line(
      `${SETS[name].series} (${set.items.length} messages), scanner`,
      `precision ${ratio(all.foundRight, all.found)} (${all.foundRight}/${all.found}), recall ${ratio(all.covered, all.expected)} (${all.covered}/${all.expected}), negatives flagged ${all.falseAlarms}/${scan.get("negative")!.items}`,
    );
    for (const c of CLASSES) {
      const t = scan.get(c)!;
      line(
        `  ${c} (${t.items})`,
        c === "negative"
          ? `flagged ${t.falseAlarms}/${t.items}, spans found ${t.found}`
          : `precision ${ratio(t.foundRight, t.found)} (${t.foundRight}/${t.found}), recall ${ratio(t.covered, t.expected)} (${t.covered}/${t.expected})`,
      );
    }
    const store = new SqliteMemoryStore({ path: ":memory:", log });
    await store.migrate();
    const deps = benchDeps(setup, store);
    const e2e = new Map(CLASSES.map((c) => [c, emptyEndToEnd()]));
    for (const item of set.items) await tallyEndToEnd(e2e.get(item.class)!, deps, store, item);
    await store.close();
    const t = sumEndToEnd([...e2e.values()]);
    line(
      "  RememberConversation, rules mode",
      `secrets kept only as sensitive content ${ratio(t.keptSensitive, t.expected)} (${t.keptSensitive}/${t.expected}), leaked ${t.leaked} (target 0) ${t.leaked === 0 ? "MET" : "NOT MET"}, negatives stored as sensitive ${e2e.get("negative")!.falseSensitive}/${e2e.get("negative")!.items}`,
    );
    line(
      "    by class (kept sensitive/leaked)",
      CLASSES.filter((c) => c !== "negative")
        .map((c) => `${c} ${e2e.get(c)!.keptSensitive}/${e2e.get(c)!.expected} kept, ${e2e.get(c)!.leaked} leaked`)
        .join(", "),
    );
  }
}

const emptyScan = (): ScanTally => ({ items: 0, found: 0, foundRight: 0, expected: 0, covered: 0, falseAlarms: 0 });
const emptyEndToEnd = (): EndToEndTally => ({ items: 0, expected: 0, keptSensitive: 0, leaked: 0, falseSensitive: 0 });
const ratio = (a: number, b: number) => (b === 0 ? "-" : (a / b).toFixed(2));

function sumScan(ts: readonly ScanTally[]): ScanTally {
  const out = emptyScan();
  for (const t of ts) for (const k of Object.keys(out) as (keyof ScanTally)[]) out[k] += t[k];
  return out;
}

function sumEndToEnd(ts: readonly EndToEndTally[]): EndToEndTally {
  const out = emptyEndToEnd();
  for (const t of ts) for (const k of Object.keys(out) as (keyof EndToEndTally)[]) out[k] += t[k];
  return out;
}

/** Where each labelled secret of the message is, and each span found. */
function labelled(item: Item): { start: number; end: number }[] {
  return item.secrets.map((s) => {
    const start = item.message.indexOf(s);
    return { start, end: start + s.length };
  });
}

function tallyScan(t: ScanTally, item: Item, verbose: boolean): void {
  const spans = findSecrets(item.message);
  const secrets = labelled(item);
  const right = spans.filter((s) => secrets.some((x) => s.start < x.end && x.start < s.end));
  const covered = secrets.filter((x) => spans.some((s) => s.start <= x.start && x.end <= s.end));
  t.items++;
  t.found += spans.length;
  t.foundRight += right.length;
  t.expected += secrets.length;
  t.covered += covered.length;
  if (secrets.length === 0 && spans.length > 0) t.falseAlarms++;
  if (
    verbose &&
    process.env["BENCH_SECRETS_VERBOSE"] === "1" &&
    (right.length < spans.length || covered.length < secrets.length)
  )
    process.stdout.write(
      `  ${item.id} ${item.class}: found ${JSON.stringify(spans.map((s) => item.message.slice(s.start, s.end)))}, labelled ${JSON.stringify(item.secrets)}\n`,
    );
}

/** The message as a one-message conversation of a new account, rules mode; where its secrets ended up. */
async function tallyEndToEnd(t: EndToEndTally, deps: MemRecallDeps, store: SqliteMemoryStore, item: Item) {
  const ctx = benchContext(`bench-secrets-${item.id}-${randomUUID().slice(0, 8)}`);
  const r = await rememberConversation(
    deps,
    ctx,
    rememberInput.parse({ messages: [{ role: "user", content: item.message }], mode: "rules" }),
  );
  const records = await store.getMany(
    ownerOf(ctx.caller),
    r.operations.map((o) => o.memory_key),
  );
  t.items++;
  if (item.secrets.length === 0 && records.some((m) => m.sensitive)) t.falseSensitive++;
  const shown = [
    ...r.operations.flatMap((o) => [o.summary, o.reason]),
    ...records.flatMap((m) => [m.summary, ...m.keywords.map((k) => k.keyword), ...(m.sensitive ? [] : [m.content])]),
  ]
    .join("\n")
    .toLowerCase();
  for (const secret of item.secrets) {
    t.expected++;
    // A part of one is a leak too: a line of a private key block.
    const parts = [secret, ...secret.split(/\s+/).filter((p) => p.length >= 16)];
    if (parts.some((p) => shown.includes(p.toLowerCase()))) t.leaked++;
    else if (records.some((m) => m.sensitive && m.content.includes(secret))) t.keptSensitive++;
  }
}
