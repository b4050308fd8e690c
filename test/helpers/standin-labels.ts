import { timestampFromMs } from "@bufbuild/protobuf/wkt";
import type { Client } from "@connectrpc/connect";
import type { MemRecallService } from "../../gen/contextloader/memrecall/v1/memrecall_pb";
import type { ProbeSet } from "../../src/memrecall/calibration";
import { startServer, type TestServer } from "./server";
import { type LabelledSet, STANDIN_GRID, type StandinEmbeddings, startStandinEmbeddings } from "./standin-embeddings";

/**
 * Meanings for the stand-in embeddings model (standin-embeddings.ts,
 * `meaningOf`) of the texts a service call derives from a labelled
 * conversation — the searches Recall builds from its turns, the candidate
 * memories RememberConversation takes from them — read from the set's labels
 * for that conversation, never from how the service derived the texts.
 *
 * The test runs its conversations one at a time, each inside `during(labels,
 * call)`: every text the stand-in is asked for meanwhile that the set does not
 * hold (its stored memories are the set's own) is given the meaning `labels`
 * names for it. A text keeps the meaning it was first given, as a model gives
 * one text one vector: two conversations that search the same words get what
 * the first one meant.
 */
export class ConversationMeanings {
  /** Every text given a meaning, with the conversation (`name`) it was first embedded for. */
  readonly given = new Map<string, { name: string; keys: readonly string[] }>();
  private current: { name: string; labels: (text: string) => readonly string[] } | undefined;

  /** `always`: meanings that hold whatever conversation runs (the calibration probe's texts, embedded at start-up). */
  constructor(private readonly always: (text: string) => readonly string[] | undefined = () => undefined) {}

  /** For StandinOptions.meaningOf. */
  readonly meaningOf = (text: string): readonly string[] | undefined => {
    const fixed = this.always(text);
    if (fixed) return fixed;
    const before = this.given.get(text);
    if (before) return before.keys;
    if (!this.current) return undefined;
    const keys = this.current.labels(text);
    this.given.set(text, { name: this.current.name, keys });
    return keys;
  };

  /** Runs `call` with the texts embedded meanwhile labelled by `labels` (the conversation `name`'s). */
  async during<T>(name: string, labels: (text: string) => readonly string[], call: () => Promise<T>): Promise<T> {
    if (this.current) throw new Error(`${name}: conversation ${this.current.name} is still running`);
    this.current = { name, labels };
    try {
      return await call();
    } finally {
      this.current = undefined;
    }
  }
}

/** A memory of a labelled set, as StoreMemory is given it. */
export interface SetMemory {
  memory_key: string;
  memory_type: string;
  summary: string;
  content: string;
}

/** A memory as the labelled sets date it: stated `created_days_ago` before now. */
export interface DatedMemory extends SetMemory {
  keywords?: string[];
  created_days_ago: number;
  supersedes?: string;
}

const DAY_MS = 86_400_000;

/** The memories through StoreMemory, oldest first, each stated `created_days_ago` before now (a second apart among equals, in the set's order). */
export async function storeDated(c: Client<typeof MemRecallService>, memories: readonly DatedMemory[]): Promise<void> {
  const now = Date.now();
  const oldestFirst = [...memories].sort((a, b) => b.created_days_ago - a.created_days_ago);
  for (const [order, m] of oldestFirst.entries()) {
    await c.storeMemory({
      memoryKey: m.memory_key,
      memoryType: m.memory_type,
      summary: m.summary,
      content: m.content,
      keywords: (m.keywords ?? []).map((keyword) => ({ keyword, weight: 1 })),
      supersedes: m.supersedes ?? "",
      statedAt: timestampFromMs(now - m.created_days_ago * DAY_MS - (oldestFirst.length - order) * 1000),
    });
  }
}

/**
 * A fresh service (quiet logs) on a stand-in holding `memories` and giving
 * every other text the meaning `meanings` names (STANDIN_GRID's size and
 * seed), or on the lexical default when `standin` is undefined.
 */
export async function serviceOnStandin(
  memories: readonly SetMemory[],
  standin: { base: number; noise: number } | undefined,
  meanings: ConversationMeanings,
): Promise<{ server: TestServer; unrecognised(): string[]; close(): Promise<void> }> {
  const model: StandinEmbeddings | undefined = standin
    ? await startStandinEmbeddings({
        set: memoriesOnly(memories),
        ...standin,
        dim: STANDIN_GRID.dim,
        seed: STANDIN_GRID.seed,
        meaningOf: meanings.meaningOf,
      })
    : undefined;
  let server: TestServer;
  try {
    server = await startServer({
      ...(model ? { EMBEDDINGS_BASE_URL: model.baseUrl, EMBEDDINGS_MODEL: "standin" } : {}),
      LOG_LEVEL: "warn",
    });
  } catch (err) {
    await model?.close();
    throw err;
  }
  return {
    server,
    /** The texts the stand-in took for nothing its labels name, and the memories it never saw stored. */
    unrecognised() {
      if (!model) return [];
      const seen = [...model.model.seen];
      const stored = new Set(seen.flatMap(([, l]) => (l?.kind === "memory" ? [l.key] : [])));
      return [
        ...seen.flatMap(([text, label]) => (label === undefined ? [text] : [])),
        ...memories.flatMap((m) => (stored.has(m.memory_key) ? [] : [m.memory_key])),
      ];
    },
    async close() {
      await server.close();
      await model?.close();
    },
  };
}

/** A stand-in's set of memories only: what else it embeds gets its meaning from `meaningOf`. */
export function memoriesOnly(memories: readonly SetMemory[]): LabelledSet {
  return { memories, queries: [] };
}

/** recall@k of `keys` (best first) over the `needed` ones, and the reciprocal rank of the first needed. */
export function scoreOf(keys: readonly string[], needed: readonly string[], k: number): { recall: number; rr: number } {
  const top = keys.slice(0, k);
  const first = keys.findIndex((key) => needed.includes(key));
  return {
    recall: needed.filter((n) => top.includes(n)).length / needed.length,
    rr: first === -1 ? 0 : 1 / (first + 1),
  };
}

/**
 * The meanings of the calibration probe's texts (data/memrecall/probe.json),
 * for the stand-in's `meaningOf`: a paraphrase pair's two texts one meaning,
 * an unrelated pair's memory and query one each, so that the start-up probe
 * measures the stand-in as it would a model.
 */
export function probeMeaningOf(probe: ProbeSet): (text: string) => readonly string[] | undefined {
  const meanings = new Map<string, string>();
  for (const [i, p] of probe.pairs.entries()) {
    if (p.kind === "paraphrase") for (const t of [p.memory, p.query]) meanings.set(t, `probe-${i}`);
    else {
      meanings.set(p.memory, `probe-${i}-memory`);
      meanings.set(p.query, `probe-${i}-query`);
    }
  }
  return (text) => {
    const meaning = meanings.get(text);
    return meaning === undefined ? undefined : [meaning];
  };
}
