import type { ProbeSet } from "../../src/memrecall/calibration";
import type { LabelledSet } from "./standin-embeddings";

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
