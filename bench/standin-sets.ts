/** The labelled sets the stand-in embeddings model (`npm run standin`) takes its meanings from. */
import { readFileSync } from "node:fs";
import { basename } from "node:path";
import { z } from "zod";
import type { LabelledSet } from "../test/helpers/standin-embeddings";

/** The labelled sets whose texts `npm run eval` embeds, relative to the repository. */
export const STANDIN_SETS = [
  "bench/memrecall-eval.json",
  "bench/memrecall-work-eval.json",
  "bench/memrecall-dev-22.json",
  "bench/memrecall-holdout.json",
  "bench/recall-eval.json",
  "bench/recall-dev-22.json",
  "bench/recall-holdout.json",
  "bench/remember-dev.json",
  "bench/remember-holdout.json",
];

const memory = z.object({ memory_key: z.string(), summary: z.string(), content: z.string() });
/** The shapes of bench/'s labelled sets that hold memories: memory search's, Recall's and RememberConversation's. */
const setFile = z.union([
  z.object({
    memories: z.array(memory),
    queries: z.array(z.object({ query: z.string(), relevant: z.array(z.string()) })),
  }),
  z.object({ memories: z.array(memory), conversations: z.array(z.unknown()) }),
  z.object({ conversations: z.array(z.object({ id: z.string(), prior_memories: z.array(memory) })) }),
]);

/**
 * One labelled set from several files: each memory's meaning named by its
 * file (and conversation) as well as its key, since two sets may use one key
 * for different memories. Recall's sets give their memories only (a
 * conversation is not a query the set answers), RememberConversation's the
 * memories each conversation starts with.
 */
export function labelledSetOf(files: readonly string[]): LabelledSet {
  const memories: LabelledSet["memories"][number][] = [];
  const queries: LabelledSet["queries"][number][] = [];
  for (const file of files) {
    let parsed: z.output<typeof setFile>;
    try {
      parsed = setFile.parse(JSON.parse(readFileSync(file, "utf8")));
    } catch (err) {
      const why = err instanceof z.ZodError ? "not a labelled set of memories" : (err as Error).message;
      throw new Error(`--set ${file}: ${why}`);
    }
    const name = basename(file);
    if ("memories" in parsed) {
      for (const m of parsed.memories) memories.push({ ...m, memory_key: `${name}#${m.memory_key}` });
      if ("queries" in parsed)
        for (const q of parsed.queries)
          queries.push({ query: q.query, relevant: q.relevant.map((k) => `${name}#${k}`) });
    } else {
      for (const c of parsed.conversations)
        for (const m of c.prior_memories) memories.push({ ...m, memory_key: `${name}#${c.id}#${m.memory_key}` });
    }
  }
  return { memories, queries };
}
