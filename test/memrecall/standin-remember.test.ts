import { randomUUID } from "node:crypto";
import { readFileSync } from "node:fs";
import { timestampFromMs } from "@bufbuild/protobuf/wkt";
import type { Client } from "@connectrpc/connect";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { MemRecallService } from "../../gen/contextloader/memrecall/v1/memrecall_pb";
import { MEMRECALL_PROBE } from "../../src/config-fields";
import { loadProbe } from "../../src/memrecall/calibration";
import { clientWith } from "../helpers/rpc";
import { startServer } from "../helpers/server";
import { STANDIN_GRID, startStandinEmbeddings } from "../helpers/standin-embeddings";
import {
  ConversationMeanings,
  memoriesOnly,
  probeMeaningOf,
  type SetMemory,
  scoreOf,
  serviceOnStandin,
} from "../helpers/standin-labels";

/**
 * Issue 34 item 3 for RememberConversation: rules mode through the RPC
 * against the stand-in embeddings model (test/helpers/standin-embeddings.ts)
 * at two cosine ranges (unrelated texts near 0.15 and near 0.7) and three
 * noise levels, on the development set bench/remember-dev.json (the held-out
 * set is not read here), with a fresh stand-in and server each.
 *
 * The stand-in gives each prior memory its own meaning, and each text the
 * service embeds while a conversation runs (its candidates, as the similarity
 * step searches them and as they are stored) the meaning of the expected
 * memory whose `must_contain` it holds (as bench/remember.ts matches them):
 * its own, joined with its target's when it updates or supersedes one (the same
 * subject, said anew). A text holding no expected memory is what the
 * conversation restates (its `noop` priors) or, with none, something of its own.
 *
 * Measured, per base and noise, and without a model (the lexical default)
 * for reference: precision and recall of the kept memories, changed
 * preferences superseding the right memory and memories changed that should
 * not be (as bench/remember.ts measures them); and the similarity step's
 * search alone (the hybrid one; rules mode adds a keyword search to it): each
 * candidate that updates or supersedes a prior, its text as the service
 * embedded it searched among all the set's prior memories, in each mode, at
 * the step's own floor and at the default min_relevance_score — whether the
 * prior it changes comes first, is among the five compared, and MRR.
 * Asserted is what holds today of what issue 34 asks of any model: none of it
 * falls as the noise falls; what RememberConversation keeps and supersedes is
 * the same under either range and no less than without a model; near 0.15,
 * the step's hybrid ranking is at least its parts; near 0.7, the default
 * threshold keeps what it ranked. The rest — the step's ranking at least its
 * parts near 0.7 and the same under either range, the threshold near 0.15 —
 * is printed here and waits for calibration and fusion (issue 34 items 1 and 2).
 */

/** The calibration probe's texts, which the service embeds at start-up to learn the stand-in's scale. */
const PROBE_MEANINGS = probeMeaningOf(loadProbe(MEMRECALL_PROBE));

interface Prior extends SetMemory {
  stated_at?: string;
}
interface Expected {
  op: "ADD" | "UPDATE" | "SUPERSEDE";
  memory_type: string;
  must_contain: string[];
  target?: string;
}
interface Conversation {
  id: string;
  class: string;
  prior_memories: Prior[];
  messages: { role: string; content: string; time?: string }[];
  expected: Expected[];
  noop?: string[];
}
const SET = JSON.parse(readFileSync(new URL("../../bench/remember-dev.json", import.meta.url), "utf8")) as {
  conversations: Conversation[];
};
const PRIORS = SET.conversations.flatMap((c) => c.prior_memories);

const { noise: NOISE, bases: BASES, dim: DIM, seed: SEED } = STANDIN_GRID;
/** The default min_relevance_score. */
const DEFAULT_MIN_SCORE = 0.5;
/** The similar memories the similarity step compares a candidate with, and its own bar (remember.ts SIMILAR, SIMILAR_FLOOR). */
const SIMILAR = 5;
const SIMILAR_FLOOR = 0.1;

type MemClient = Client<typeof MemRecallService>;
type Mode = "keyword" | "semantic" | "hybrid";

interface Figures {
  /** Memories written, and of them those holding an expected memory (each matched once). */
  kept: number;
  expected: number;
  /** Expected memories kept. */
  found: number;
  supersedes: number;
  supersedesRight: number;
  /** Priors updated or superseded that no expected memory targets. */
  wrongChanges: number;
  /** The similarity step's searches, each candidate changing a prior: the prior first, among the five compared, and MRR, per mode. */
  similar: Record<Mode | "hybridFloor" | "hybridDefault", { first: number; found: number; mrr: number }>;
  /** The candidates changing a prior, as the similarity step searched them, and the prior each changes. */
  changing: { text: string; target: string }[];
  /** Texts embedded during a conversation that hold none of its expected memories. */
  unmatched: number;
}

const holds = (text: string, e: Expected) => e.must_contain.every((w) => text.toLowerCase().includes(w.toLowerCase()));

/**
 * The meaning of a text embedded while `c` ran, from its labels: the expected memory it holds (joined with the
 * prior it changes), else one embedded before in this conversation with the same first line (a candidate stored
 * sensitive is embedded by its summary and keywords), else what the conversation restates, else its own.
 */
function labelsOf(c: Conversation, seen: Map<string, readonly string[]>) {
  return (text: string): readonly string[] => {
    const i = c.expected.findIndex((e) => holds(text, e));
    const first = text.split("\n")[0];
    const keys =
      i >= 0
        ? [`${c.id}#${i}`, ...(c.expected[i]!.target ? [c.expected[i]!.target!] : [])]
        : ([...seen].find(([t]) => t.split("\n")[0] === first)?.[1] ??
          (c.noop && c.noop.length > 0 ? c.noop : [`${c.id}: not kept`]));
    seen.set(text, keys);
    return keys;
  };
}

async function storePriors(c: MemClient, priors: readonly Prior[]): Promise<void> {
  for (const p of priors) {
    await c.storeMemory({
      memoryKey: p.memory_key,
      memoryType: p.memory_type,
      summary: p.summary,
      content: p.content,
      ...(p.stated_at ? { statedAt: timestampFromMs(Date.parse(p.stated_at)) } : {}),
    });
  }
}

/** One conversation through RememberConversation (rules mode) in an account of its own holding its priors. */
async function remember(baseUrl: string, c: Conversation, meanings: ConversationMeanings) {
  const client = clientWith(MemRecallService, baseUrl, {
    "x-account-id": `u-${c.id}-${randomUUID().slice(0, 8)}`,
    // Contents are matched whole, a sensitive memory's too.
    "x-account-scopes": "memories:sensitive",
  });
  await storePriors(client, c.prior_memories);
  const seen = new Map<string, readonly string[]>();
  const r = await meanings.during(c.id, labelsOf(c, seen), () =>
    client.rememberConversation({
      mode: "rules",
      messages: c.messages.map((m) => ({
        role: m.role,
        content: m.content,
        ...(m.time ? { time: timestampFromMs(Date.parse(m.time)) } : {}),
      })),
    }),
  );
  const written = r.operations.filter((o) => o.operation !== "NOOP");
  const contentOf = new Map<string, string>();
  for (const o of written)
    contentOf.set(o.memoryKey, (await client.getMemoryDetail({ memoryKey: o.memoryKey })).content.toLowerCase());
  // Each expected memory matched once, by the first kept memory holding all its words (bench/remember.ts).
  const matched = new Map<number, (typeof written)[number]>();
  for (const o of written) {
    const e = c.expected.findIndex((x, i) => !matched.has(i) && holds(contentOf.get(o.memoryKey) ?? "", x));
    if (e >= 0) matched.set(e, o);
  }
  const expectedSupersedes = c.expected.flatMap((x, i) => (x.op === "SUPERSEDE" ? [i] : []));
  const targets = new Set(c.expected.flatMap((x) => (x.target ? [x.target] : [])));
  const priors = new Set(c.prior_memories.map((p) => p.memory_key));
  return {
    kept: written.length,
    found: matched.size,
    supersedes: expectedSupersedes.length,
    supersedesRight: expectedSupersedes.filter((i) => {
      const o = matched.get(i);
      return o?.operation === "SUPERSEDE" && o.supersedes === c.expected[i]!.target;
    }).length,
    wrongChanges: written.filter((o) => {
      const changed = o.operation === "UPDATE" ? o.memoryKey : o.operation === "SUPERSEDE" ? o.supersedes : "";
      return changed !== "" && priors.has(changed) && !targets.has(changed);
    }).length,
    /** The texts embedded for it that hold an expected memory changing a prior: what the similarity step searched. */
    changing: [...seen].flatMap(([text]) => {
      const e = c.expected.find((x) => holds(text, x));
      return e?.target ? [{ text, target: e.target }] : [];
    }),
    unmatched: [...seen].filter(([text]) => !c.expected.some((e) => holds(text, e))).length,
  };
}

/**
 * The set's conversations remembered, and the similarity step's searches measured: of the candidates the
 * stand-in was asked to embed, or (without a model, which tells nothing of what was embedded) of `candidates`.
 */
async function measure(
  baseUrl: string,
  meanings: ConversationMeanings,
  candidates?: Figures["changing"],
): Promise<Figures> {
  const f: Omit<Figures, "similar" | "changing"> = {
    kept: 0,
    expected: 0,
    found: 0,
    supersedes: 0,
    supersedesRight: 0,
    wrongChanges: 0,
    unmatched: 0,
  };
  const embedded: Figures["changing"] = [];
  // One conversation at a time: the stand-in reads what the texts it is asked for mean from the one running.
  for (const c of SET.conversations) {
    const r = await remember(baseUrl, c, meanings);
    f.kept += r.kept;
    f.expected += c.expected.length;
    f.found += r.found;
    f.supersedes += r.supersedes;
    f.supersedesRight += r.supersedesRight;
    f.wrongChanges += r.wrongChanges;
    f.unmatched += r.unmatched;
    embedded.push(...r.changing);
  }
  const changing = candidates ?? embedded;
  // The similarity step's searches among every prior of the set: the user's memories, the one changed among them.
  const all = clientWith(MemRecallService, baseUrl, { "x-account-id": `u-priors-${randomUUID().slice(0, 8)}` });
  await storePriors(all, PRIORS);
  const similar = {} as Figures["similar"];
  for (const [mode, minRelevanceScore] of [
    ["keyword", 0],
    ["semantic", 0],
    ["hybrid", 0],
    ["hybridFloor", SIMILAR_FLOOR],
    ["hybridDefault", DEFAULT_MIN_SCORE],
  ] as const) {
    let first = 0;
    let found = 0;
    let rr = 0;
    for (const q of changing) {
      const { results } = await all.searchMemories({
        query: q.text,
        searchMode: mode === "hybridFloor" || mode === "hybridDefault" ? "hybrid" : mode,
        minRelevanceScore,
        limit: SIMILAR,
      });
      const keys = results.map((x) => x.memoryKey);
      first += scoreOf(keys, [q.target], 1).recall;
      const score = scoreOf(keys, [q.target], SIMILAR);
      found += score.recall;
      rr += score.rr;
    }
    const n = changing.length;
    similar[mode] = { first: first / n, found: found / n, mrr: rr / n };
  }
  return { ...f, similar, changing };
}

const f2 = (a: number, b: number) => (b === 0 ? "-" : (a / b).toFixed(2));
const f3 = (x: number) => x.toFixed(3);
const precision = (f: Figures) => f.found / f.kept;
const recall = (f: Figures) => f.found / f.expected;
const superseding = (f: Figures) => f.supersedesRight / f.supersedes;

function printed(model: string, f: Figures): string {
  const s = f.similar;
  const similar = (x: Figures["similar"][Mode]) => `${f3(x.first)}/${f3(x.found)}/${f3(x.mrr)}`;
  return (
    `${model}, remember-dev (${SET.conversations.length} conversations, rules mode): ` +
    `precision ${f2(f.found, f.kept)} (${f.found}/${f.kept}), recall ${f2(f.found, f.expected)} (${f.found}/${f.expected}), ` +
    `changed preferences superseding right ${f2(f.supersedesRight, f.supersedes)} (${f.supersedesRight}/${f.supersedes}), ` +
    `memories changed that should not be ${f.wrongChanges}; texts embedded holding no expected memory ${f.unmatched}\n` +
    `  similarity step, ${f.changing.length} candidates changing a prior, among the set's ${PRIORS.length} priors ` +
    `(the prior first/among the ${SIMILAR} compared/MRR): keyword ${similar(s.keyword)} | semantic ${similar(s.semantic)} | ` +
    `hybrid ${similar(s.hybrid)} | hybrid at the step's own floor ${SIMILAR_FLOOR} ${similar(s.hybridFloor)} | hybrid at the default min_relevance_score ${DEFAULT_MIN_SCORE} ${similar(s.hybridDefault)}\n`
  );
}

describe("RememberConversation with the stand-in model (EMBEDDINGS_BASE_URL), on the development set", () => {
  const figures = new Map<string, Figures>();
  /** Texts the stand-in was asked for that it took for nothing the set labels. */
  const unrecognised: string[] = [];
  const open: { close(): Promise<void> }[] = [];
  const at = (base: number, noise: number) => figures.get(`${base}/${noise}`)!;

  /** A fresh server (with the stand-in when `standin` is given), the set's conversations remembered, measured. */
  async function run(standin?: { base: number; noise: number }, candidates?: Figures["changing"]): Promise<Figures> {
    const meanings = new ConversationMeanings(PROBE_MEANINGS);
    const service = await serviceOnStandin(PRIORS, standin, meanings);
    open.push(service);
    const f = await measure(service.server.baseUrl, meanings, candidates);
    unrecognised.push(...service.unrecognised());
    await service.close();
    return f;
  }

  beforeAll(async () => {
    for (const base of BASES) {
      for (const noise of NOISE) {
        const f = await run({ base, noise });
        figures.set(`${base}/${noise}`, f);
        process.stdout.write(printed(`stand-in base ${base} noise ${noise}`, f));
      }
    }
    // The same candidates: rules mode takes them from the conversation, whatever the model.
    const lexical = await run(undefined, at(BASES[0], NOISE[0]).changing);
    figures.set("lexical", lexical);
    process.stdout.write(printed("without a model (the lexical default)", lexical));
  }, 1_200_000);
  afterAll(async () => {
    for (const o of open) await o.close();
  });

  it("recognised every text it was asked for: each prior as itself, each candidate as its conversation's", () => {
    expect(figures.size).toBe(1 + BASES.length * NOISE.length);
    expect(unrecognised).toEqual([]);
    for (const f of figures.values()) expect(f.changing.length).toBeGreaterThan(0);
  });

  for (const base of BASES) {
    it(`unrelated texts near ${base}: what RememberConversation keeps and supersedes does not fall as the model's noise falls`, () => {
      for (const figure of [precision, recall, superseding]) {
        const levels = NOISE.map((noise) => figure(at(base, noise)));
        for (let i = 1; i < levels.length; i++) expect(levels[i]!).toBeGreaterThanOrEqual(levels[i - 1]!);
      }
    });

    // The similarity step's own ranking is printed, not asserted per level: 8 candidates change a prior, so one
    // candidate moves a figure by 0.125 (at noise 2 hybrid put another prior first for one of them); what it decides
    // (kept, superseded) is asserted above and below.
    it(`unrelated texts near ${base}: the similarity step's semantic search finds the prior a candidate changes more as the noise falls`, () => {
      for (const figure of ["first", "mrr"] as const) {
        const levels = NOISE.map((noise) => at(base, noise).similar.semantic[figure]);
        for (let i = 1; i < levels.length; i++) expect(levels[i]!).toBeGreaterThanOrEqual(levels[i - 1]!);
        expect(levels.at(-1)!).toBeGreaterThan(levels[0]!);
      }
    });
  }

  it("what RememberConversation keeps and supersedes is the same under either cosine range (within 0.03)", () => {
    for (const noise of NOISE)
      for (const figure of [precision, recall, superseding])
        expect(Math.abs(figure(at(0.15, noise)) - figure(at(0.7, noise)))).toBeLessThanOrEqual(0.03);
  });

  // Rules decide by words; a model only adds the memories it finds alike to those compared.
  it("with a model RememberConversation keeps and supersedes no less than without one (within 0.02)", () => {
    const lexical = figures.get("lexical")!;
    for (const base of BASES)
      for (const noise of NOISE)
        for (const figure of [precision, recall, superseding])
          expect(figure(at(base, noise))).toBeGreaterThanOrEqual(figure(lexical) - 0.02);
  });

  it("the same vectors under either cosine range, the similarity step ranks the prior a candidate changes alike (within 0.03)", () => {
    for (const noise of NOISE)
      for (const mode of ["keyword", "semantic", "hybrid"] as const)
        for (const figure of ["first", "mrr"] as const)
          expect(
            Math.abs(at(0.15, noise).similar[mode][figure] - at(0.7, noise).similar[mode][figure]),
          ).toBeLessThanOrEqual(0.03);
  });

  it("with a sharp model (noise 1) the similarity step's hybrid search ranks at least as its parts, and the default bar keeps ≥ 90% of what it found", () => {
    for (const base of BASES) {
      const s = at(base, 1).similar;
      for (const figure of ["first", "mrr"] as const)
        expect(s.hybrid[figure]).toBeGreaterThanOrEqual(Math.max(s.keyword[figure], s.semantic[figure]) - 0.02);
      expect(s.hybridDefault.found).toBeGreaterThanOrEqual(0.9 * s.hybrid.found);
    }
  });
});

describe("RememberConversation in rules mode with a model that relates no two texts", () => {
  // The stand-in given no set: every text a direction of its own, so a changed preference and the one it changes
  // sit at the cosine of unrelated texts, below the endpoint's floor. The rules decide by the words the two share.
  it("supersedes each changed preference of the development set that it supersedes without a model", async () => {
    const changed = SET.conversations.filter((c) => c.expected.some((e) => e.op === "SUPERSEDE"));
    const standin = await startStandinEmbeddings({ set: memoriesOnly([]), noise: 0, base: 0.15, dim: DIM, seed: SEED });
    const withModel = await startServer({
      EMBEDDINGS_BASE_URL: standin.baseUrl,
      EMBEDDINGS_MODEL: "standin",
      LOG_LEVEL: "warn",
    });
    const without = await startServer({ LOG_LEVEL: "warn" });
    try {
      const superseding = async (baseUrl: string) => {
        const right: string[] = [];
        for (const c of changed)
          if ((await remember(baseUrl, c, new ConversationMeanings(PROBE_MEANINGS))).supersedesRight > 0)
            right.push(c.id);
        return right;
      };
      const lexical = await superseding(without.baseUrl);
      expect(lexical.length).toBeGreaterThan(0);
      expect(await superseding(withModel.baseUrl)).toEqual(lexical);
    } finally {
      await withModel.close();
      await without.close();
      await standin.close();
    }
  });
});
