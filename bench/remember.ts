import { randomUUID } from "node:crypto";
import { readFileSync } from "node:fs";
import { z } from "zod";
import { loadConfig } from "../src/config";
import { storeMemoryInput } from "../src/memrecall/inputs";
import type { MemRecallDeps } from "../src/memrecall/memories-deps";
import { ownerOf } from "../src/memrecall/owner";
import { rememberInput } from "../src/memrecall/remember/input";
import { type RememberResult, rememberConversation } from "../src/memrecall/remember/remember";
import { storeMemory } from "../src/memrecall/write";
import { SqliteMemoryStore } from "../src/store/memories/sqlite-memory-store";
import { LlmClient } from "../src/upstream/llm-client";
import { type ChatRequest, startScriptedLlm } from "../test/helpers/scripted-llm";
import { figure } from "./figures";
import { type BenchSetup, benchContext, benchDeps, benchSetup, benchLog as log } from "./memrecall-deps";
import { point } from "./record";
import { line } from "./stats";

/** Issue 25: a second run creates no duplicate, and no secret reaches a summary or keyword. */
const TARGET_DUPLICATES = 0;
const TARGET_LEAKS = 0;

const evalSet = z.object({
  conversations: z.array(
    z.object({
      id: z.string(),
      class: z.string(),
      prior_memories: z.array(
        z.object({
          memory_key: z.string(),
          memory_type: z.string(),
          summary: z.string(),
          content: z.string(),
          stated_at: z.string().optional(),
        }),
      ),
      messages: z.array(
        z.object({ role: z.enum(["user", "assistant", "system"]), content: z.string(), time: z.string().optional() }),
      ),
      expected: z.array(
        z.object({
          op: z.enum(["ADD", "UPDATE", "SUPERSEDE"]),
          memory_type: z.string(),
          must_contain: z.array(z.string()).min(1),
          target: z.string().optional(),
          sensitive: z.boolean().default(false),
        }),
      ),
      noop: z.array(z.string()).default([]),
      secrets: z.array(z.string()).default([]),
    }),
  ),
});
type Conversation = z.output<typeof evalSet>["conversations"][number];

/** The development set (tuned on) and the held-out set (written first, never tuned on). */
const SETS = {
  development: { file: "./remember-dev.json", series: "development set" },
  heldOut: { file: "./remember-holdout.json", series: "held-out set" },
} as const;

interface Tally {
  kept: number;
  keptRight: number;
  expected: number;
  found: number;
}

/**
 * RememberConversation (issue 25) in rules mode, on the labelled
 * conversations of bench/remember-dev.json and bench/remember-holdout.json
 * (40 each, with the memories a careful person would keep, written before
 * the rules were tuned). A kept memory is right when its content holds every
 * `must_contain` of an expected one (each expected memory matched once).
 * Printed per set and per class: precision and recall of the kept memories,
 * changed preferences superseding the right memory, memories changed that
 * should not have been, duplicates a second run creates, secrets leaked into
 * summaries or keywords, and sensitive memories kept as sensitive.
 */
export async function benchRemember(): Promise<void> {
  const setup = await benchSetup(loadConfig({}));
  try {
    await rememberQuality(setup);
    await benchLlmPlumbing(setup);
  } finally {
    await setup.close();
  }
}

/**
 * The quality part of the bench under `setup`'s configuration (`npm run eval`
 * runs this part alone): rules mode on both sets, and LLM mode with the
 * configured LLM when there is one.
 */
export async function rememberQuality(setup: BenchSetup): Promise<void> {
  const llm = setup.memrecall.llm;
  const modes = llm ? (["rules", "llm"] as const) : (["rules"] as const);
  for (const mode of modes) {
    for (const name of ["development", "heldOut"] as const) {
      const store = new SqliteMemoryStore({ path: ":memory:", log });
      try {
        await store.migrate();
        const label = mode === "rules" ? "rules mode" : `LLM mode, ${llm?.model}`;
        await benchSet(name, readSet(name), benchDeps(setup, store), store, mode, label);
      } finally {
        await store.close();
      }
    }
  }
}

type EvalSet = z.output<typeof evalSet>;

function readSet(name: keyof typeof SETS): EvalSet {
  return evalSet.parse(JSON.parse(readFileSync(new URL(SETS[name].file, import.meta.url), "utf8")));
}

async function benchSet(
  name: keyof typeof SETS,
  set: EvalSet,
  deps: MemRecallDeps,
  store: SqliteMemoryStore,
  mode: "rules" | "llm",
  /** How the mode is named in the printed lines: "rules mode", "LLM mode, scripted". */
  modeLabel: string,
  /** Told each conversation before it runs (the scripted LLM's oracle). */
  starting?: (conv: Conversation) => void,
): Promise<void> {
  {
    const byClass = new Map<string, Tally>();
    const total: Tally = { kept: 0, keptRight: 0, expected: 0, found: 0 };
    let supersedes = 0;
    let supersedesRight = 0;
    let wrongChanges = 0;
    let duplicates = 0;
    let leaks = 0;
    let sensitiveExpected = 0;
    let sensitiveKept = 0;
    for (const conv of set.conversations) {
      starting?.(conv);
      const r = await runConversation(deps, store, conv, mode);
      const tally = byClass.get(conv.class) ?? { kept: 0, keptRight: 0, expected: 0, found: 0 };
      byClass.set(conv.class, tally);
      for (const t of [tally, total]) {
        t.kept += r.kept;
        t.keptRight += r.keptRight;
        t.expected += conv.expected.length;
        t.found += r.found;
      }
      supersedes += r.supersedes;
      supersedesRight += r.supersedesRight;
      wrongChanges += r.wrongChanges;
      duplicates += r.duplicates;
      leaks += r.leaks;
      sensitiveExpected += r.sensitiveExpected;
      sensitiveKept += r.sensitiveKept;
    }
    const label = `${SETS[name].series} (${set.conversations.length} conversations, ${modeLabel})`;
    const at = [SETS[name].series, modeLabel];
    figure([...at, "precision"], total.kept === 0 ? 0 : total.keptRight / total.kept);
    figure([...at, "recall"], total.expected === 0 ? 0 : total.found / total.expected);
    for (const [c, t] of byClass) {
      if (t.kept > 0) figure([...at, "by class", c, "precision"], t.keptRight / t.kept);
      if (t.expected > 0) figure([...at, "by class", c, "recall"], t.found / t.expected);
    }
    figure([...at, "duplicates on a second run"], duplicates);
    figure([...at, "secrets leaked"], leaks);
    line(
      label,
      `precision ${ratio(total.keptRight, total.kept)} (${total.keptRight}/${total.kept}), recall ${ratio(total.found, total.expected)} (${total.found}/${total.expected})`,
    );
    line(
      "  by class (precision/recall)",
      [...byClass]
        .sort(([a], [b]) => a.localeCompare(b))
        .map(([c, t]) => `${c} ${ratio(t.keptRight, t.kept)}/${ratio(t.found, t.expected)}`)
        .join(", "),
    );
    line(
      "  changed preferences superseding right",
      `${ratio(supersedesRight, supersedes)} (${supersedesRight}/${supersedes}); memories changed that should not be: ${wrongChanges}`,
    );
    line(
      "  sensitive kept as sensitive",
      `${ratio(sensitiveKept, sensitiveExpected)} (${sensitiveKept}/${sensitiveExpected})`,
    );
    line(
      "  duplicates on a second run",
      `${duplicates} (target ${TARGET_DUPLICATES}) ${duplicates <= TARGET_DUPLICATES ? "MET" : "NOT MET"}; secrets leaked into summaries or keywords: ${leaks} (target ${TARGET_LEAKS}) ${leaks <= TARGET_LEAKS ? "MET" : "NOT MET"}`,
    );
    if (mode === "rules") {
      point("remember", SETS[name].series, "precision", total.kept === 0 ? 0 : total.keptRight / total.kept);
      point("remember", SETS[name].series, "recall", total.expected === 0 ? 0 : total.found / total.expected);
      point("remember", SETS[name].series, "superseding right", supersedes === 0 ? 0 : supersedesRight / supersedes);
    }
  }
}

/**
 * LLM mode's plumbing, not its quality (no real LLM runs here): a scripted
 * OpenAI-compatible server answers as an oracle from the held-out set's
 * labels, reading only what the service sent it. Extraction: for each
 * expected memory, the message (as sent, secrets masked) holding its words.
 * Decision: each candidate's expected operation when its target was among the
 * similar memories offered, else ADD. What this measures is what the service
 * does around the LLM: masking (no secret in any request), restoring secrets
 * into contents only, validating and applying decisions, idempotence, and how
 * many requests a conversation costs. The oracle writes one memory per
 * sentence, so two expected memories of one sentence are one memory kept.
 * `BENCH_REMEMBER_PLUMBING_SET=development` runs it on the development set;
 * `BENCH_REMEMBER_VERBOSE=1` lists the development set's misses (never the held-out set's).
 */
async function benchLlmPlumbing(setup: BenchSetup): Promise<void> {
  const which = process.env["BENCH_REMEMBER_PLUMBING_SET"] === "development" ? "development" : "heldOut";
  const set = readSet(which);
  let current: Conversation | undefined;
  const llm = await startScriptedLlm((req) => ({ content: JSON.stringify(oracle(req, current!)) }));
  const store = new SqliteMemoryStore({ path: ":memory:", log });
  await store.migrate();
  const client = new LlmClient({ baseUrl: llm.baseUrl, apiKey: undefined, model: "scripted", timeoutMs: 10_000 });
  const deps = benchDeps(setup, store, client);
  await benchSet(which, set, deps, store, "llm", "LLM mode, scripted", (conv) => {
    current = conv;
  });
  const calls = llm.requests.length;
  const conversations = set.conversations;
  const secrets = set.conversations.flatMap((c) => c.secrets);
  const sent = llm.requests.map((r) => r.messages.map((m) => m.content).join("\n")).join("\n");
  const exposed = secrets.filter((s) => sent.includes(s)).length;
  line(
    "LLM mode, scripted oracle (plumbing)",
    `${(calls / conversations.length).toFixed(2)} LLM requests per conversation (two runs each); secrets sent to the LLM: ${exposed} (target 0) ${exposed === 0 ? "MET" : "NOT MET"}`,
  );
  await store.close();
  await llm.close();
}

/** The oracle's answer to one request of the service, from the conversation's labels and the prompt alone. */
function oracle(req: ChatRequest, conv: Conversation): unknown {
  const prompt = req.messages.map((m) => m.content).join("\n");
  if (prompt.includes("列出值得长期记住的事实")) {
    // The messages as sent: "[i] role (time): text", one after another, a text possibly many lines long.
    const shown = prompt.slice(prompt.indexOf("内容）：\n") + 5, prompt.lastIndexOf("\n\n只返回 JSON"));
    const lines = shown.split(/\n\n(?=\[\d+\] )/).flatMap((block) => {
      const m = /^\[(\d+)\] user(?: \([^)]*\))?: ([\s\S]*)$/.exec(block);
      return m ? [{ index: Number(m[1]), text: m[2]! }] : [];
    });
    return {
      memories: conv.expected.flatMap((e) => {
        const holds = (text: string) => e.must_contain.every((w) => text.toLowerCase().includes(w.toLowerCase()));
        const from = lines.find((l) => holds(l.text));
        // The sentence that holds the memory's words when one does (two memories of one message are two), else the message.
        const sentence = from?.text.split(/(?<=[。！？])\s*|(?<=[.!?])\s+/).find(holds);
        return from
          ? [
              {
                type: e.memory_type,
                content: sentence ?? from.text,
                summary: from.text.slice(0, 60),
                source_messages: [from.index],
                changes_previous: e.op === "SUPERSEDE",
              },
            ]
          : [];
      }),
    };
  }
  const blocks = [...prompt.matchAll(/^候选 (\d+)（[^）]*）：(.*)$/gm)].map((m) => ({ id: Number(m[1]), text: m[2]! }));
  return {
    decisions: blocks.map(({ id, text }) => {
      const e = conv.expected.find((x) => x.must_contain.every((w) => text.toLowerCase().includes(w.toLowerCase())));
      const offered = prompt.split(/^候选 /m)[id + 1] ?? "";
      return e?.target && offered.includes(`key=${e.target} `)
        ? { id, operation: e.op, target: e.target, reason: "oracle" }
        : { id, operation: "ADD", reason: "oracle" };
    }),
  };
}

const ratio = (a: number, b: number) => (b === 0 ? "-" : (a / b).toFixed(2));

async function runConversation(
  deps: MemRecallDeps,
  store: SqliteMemoryStore,
  conv: Conversation,
  mode: "rules" | "llm",
) {
  const ctx = benchContext(`bench-remember-${conv.id}-${randomUUID().slice(0, 8)}`);
  for (const p of conv.prior_memories) {
    await storeMemory(
      deps,
      ctx,
      storeMemoryInput.parse({
        memory_key: p.memory_key,
        memory_type: p.memory_type,
        summary: p.summary,
        content: p.content,
        ...(p.stated_at ? { stated_at: p.stated_at } : {}),
      }),
    );
  }
  const input = rememberInput.parse({ messages: conv.messages, mode });
  const first = await rememberConversation(deps, ctx, input);
  const written = first.operations.filter((o) => o.operation !== "NOOP");
  const records = await store.getMany(
    ownerOf(ctx.caller),
    written.map((o) => o.memory_key),
  );
  const contentOf = new Map(records.map((r) => [r.memory_key, r.content.toLowerCase()]));
  // Each expected memory matched once, by the first kept memory holding all its words.
  const matched = new Map<number, (typeof written)[number]>();
  let keptRight = 0;
  for (const op of written) {
    const content = contentOf.get(op.memory_key) ?? "";
    const e = conv.expected.findIndex(
      (x, i) => !matched.has(i) && x.must_contain.every((w) => content.includes(w.toLowerCase())),
    );
    if (e >= 0) {
      matched.set(e, op);
      keptRight++;
    }
  }
  const expectedSupersedes = conv.expected.flatMap((x, i) => (x.op === "SUPERSEDE" ? [i] : []));
  const supersedesRight = expectedSupersedes.filter((i) => {
    const op = matched.get(i);
    return op?.operation === "SUPERSEDE" && op.supersedes === conv.expected[i]!.target;
  }).length;
  const targets = new Set(conv.expected.flatMap((x) => (x.target ? [x.target] : [])));
  const priors = new Set(conv.prior_memories.map((p) => p.memory_key));
  const wrongChanges = written.filter((o) => {
    const changed = o.operation === "UPDATE" ? o.memory_key : o.operation === "SUPERSEDE" ? o.supersedes : "";
    return changed !== "" && priors.has(changed) && !targets.has(changed);
  }).length;
  if (process.env["BENCH_REMEMBER_VERBOSE"] === "1" && conv.id.startsWith("d"))
    for (const [i, x] of conv.expected.entries())
      if (!matched.has(i) || (x.sensitive && !matched.get(i)!.sensitive))
        process.stdout.write(
          `  ${conv.id} ${mode}: ${matched.has(i) ? "NOT SENSITIVE" : "MISS"} ${x.op} ${JSON.stringify(x.must_contain)}; kept: ${written.map((o) => `${o.operation} ${o.memory_type} ${o.summary}`).join(" | ")}\n`,
        );
  const second = await rememberConversation(deps, ctx, input);
  const duplicates = second.operations.filter((o) => o.operation !== "NOOP").length;
  const sensitiveExpected = conv.expected.filter((x) => x.sensitive).length;
  const sensitiveKept = conv.expected.filter((x, i) => x.sensitive && matched.get(i)?.sensitive === true).length;
  return {
    kept: written.length,
    keptRight,
    found: matched.size,
    supersedes: expectedSupersedes.length,
    supersedesRight,
    wrongChanges,
    duplicates,
    leaks: leaksOf(first, records, conv.secrets),
    sensitiveExpected,
    sensitiveKept,
  };
}

/** Secrets found in what is shown without the permission: summaries, keywords, reasons. */
function leaksOf(
  r: RememberResult,
  records: { summary: string; keywords: { keyword: string }[] }[],
  secrets: readonly string[],
): number {
  const shown = [
    ...r.operations.flatMap((o) => [o.summary, o.reason]),
    ...records.flatMap((m) => [m.summary, ...m.keywords.map((k) => k.keyword)]),
  ].join("\n");
  return secrets.filter((s) => shown.includes(s)).length;
}
