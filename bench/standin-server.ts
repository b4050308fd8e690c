/**
 * npm run standin: the stand-in embeddings model (test/helpers/standin-embeddings.ts)
 * as a process, for operators and CI to check the service end to end with
 * `npm run eval`. It is a tool to check how the service uses a model, not a
 * model: its vectors come from the labelled sets' answers plus noise.
 *
 *   npm run standin -- [--set FILE …] [--noise 2] [--base 0.15] [--dim 256] [--seed 1] [--model standin]
 *
 * prints its base URL (for EMBEDDINGS_BASE_URL) on one line of stdout, then
 * serves on loopback until SIGTERM or SIGINT, when it says on stderr how many
 * of the texts it embedded its sets did not label. With no --set it labels
 * every set `npm run eval` stores or searches (STANDIN_SETS).
 */
import { resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";
import { MEMRECALL_PROBE } from "../src/config-fields";
import { loadProbe } from "../src/memrecall/calibration";
import { startStandinEmbeddings } from "../test/helpers/standin-embeddings";
import { probeMeaningOf } from "../test/helpers/standin-labels";
import { labelledSetOf, STANDIN_SETS } from "./standin-sets";

function numberOf(option: string, value: string | undefined, fallback: number): number {
  if (value === undefined) return fallback;
  const n = Number(value);
  if (value.trim() === "" || !Number.isFinite(n))
    throw new Error(`--${option} must be a number, not ${JSON.stringify(value)}`);
  return n;
}

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      set: { type: "string", multiple: true },
      noise: { type: "string" },
      base: { type: "string" },
      dim: { type: "string" },
      seed: { type: "string" },
      model: { type: "string" },
    },
  });
  const root = fileURLToPath(new URL("..", import.meta.url));
  const files = values.set ?? STANDIN_SETS.map((f) => resolve(root, f));
  const set = labelledSetOf(files);
  const noise = numberOf("noise", values.noise, 2);
  const base = numberOf("base", values.base, 0.15);
  const dim = numberOf("dim", values.dim, 256);
  if (!Number.isInteger(dim) || dim < 2) throw new Error(`--dim must be a whole number of at least 2, not ${dim}`);
  const seed = numberOf("seed", values.seed, 1);
  // The calibration probe's pairs too: the service embeds them at start-up to learn the model's scale.
  const meaningOf = probeMeaningOf(loadProbe(MEMRECALL_PROBE));
  const standin = await startStandinEmbeddings({
    set,
    noise,
    base,
    dim,
    seed,
    model: values.model ?? "standin",
    meaningOf,
  });
  process.stdout.write(`${standin.baseUrl}\n`);
  process.stderr.write(
    `stand-in embeddings: noise ${noise}, base ${base}, dim ${dim}, seed ${seed}; ${set.memories.length} memories ` +
      `and ${set.queries.length} queries labelled from ${files.length} sets; serving until SIGTERM or SIGINT\n`,
  );
  const stop = async () => {
    await standin.close();
    const labels = [...standin.model.seen.values()];
    const unlabelled = labels.filter((l) => l === undefined).length;
    process.stderr.write(
      `stand-in embeddings: stopped; ${labels.length} texts embedded, ${unlabelled} of them not in its sets ` +
        "(each given a direction of its own)\n",
    );
    process.exit(0);
  };
  process.once("SIGTERM", stop);
  process.once("SIGINT", stop);
}

main().catch((err: unknown) => {
  // A wrong option or set file: one line, no stack.
  process.stderr.write(`standin: ${err instanceof Error ? err.message : String(err)}\n`);
  process.exit(2);
});
