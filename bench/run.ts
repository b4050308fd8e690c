/**
 * npm run bench: every benchmark, one after another, printing ratios measured
 * side by side in one run (absolute times are information only).
 * `npm run bench -- recall` runs that bench alone, `npm run bench -- kn` the
 * ones whose name contains "kn";
 * `--record` also writes what each printed, and its charts, into
 * docs/evaluation.md and docs/evaluation/ (see bench/record.ts).
 */
import { fileURLToPath } from "node:url";
import { benchAttacks } from "./attacks";
import { benchEngine } from "./engine";
import { benchKeywordContext } from "./keyword-context";
import { benchKnSearch } from "./kn-search";
import { benchKnToolsQuery } from "./kntools-query";
import { benchKnToolsSchema } from "./kntools-schema";
import { benchLexicon } from "./lexicon";
import { benchMemoryStore } from "./memory-store";
import { benchMemRecall } from "./memrecall";
import { benchMentions } from "./mentions";
import { benchRecall } from "./recall";
import { captureStdout, stampOf, writeRecord } from "./record";
import { benchRemember } from "./remember";
import { benchResolver } from "./resolver";
import { benchSecrets } from "./secrets";
import { benchStandin } from "./standin";
import { benchStartUp } from "./start-up";
import { benchTimeFacts } from "./time-facts";
import { benchTokens } from "./tokens";
import { benchUnary } from "./unary";

export const benches: Record<string, () => Promise<void>> = {
  engine: benchEngine,
  mentions: benchMentions,
  "keyword-context": benchKeywordContext,
  "kn-search": benchKnSearch,
  "kntools-query": benchKnToolsQuery,
  "kntools-schema": benchKnToolsSchema,
  resolver: benchResolver,
  "resolver-time-facts": benchTimeFacts,
  "memory-store": benchMemoryStore,
  memrecall: benchMemRecall,
  recall: benchRecall,
  standin: benchStandin,
  remember: benchRemember,
  secrets: benchSecrets,
  tokens: benchTokens,
  unary: benchUnary,
  lexicon: benchLexicon,
  attacks: benchAttacks,
  "start-up": benchStartUp,
};

const root = fileURLToPath(new URL("..", import.meta.url));

async function main(): Promise<void> {
  const args = process.argv.slice(2);
  const record = args.includes("--record");
  const filter = args.find((a) => !a.startsWith("--")) ?? "";
  // A bench's whole name runs that bench only ("recall", not "memrecall" too); a part of names runs every bench it is part of.
  const exact = filter in benches;
  for (const [name, run] of Object.entries(benches)) {
    if (exact ? name !== filter : !name.includes(filter)) continue;
    process.stdout.write(`\n== ${name}\n`);
    const printed = record ? captureStdout() : undefined;
    await run();
    if (printed) {
      const charts = writeRecord(root, name, printed(), stampOf(root));
      process.stdout.write(`(recorded in docs/evaluation.md${charts.map((c) => `, ${c}`).join("")})\n`);
    }
  }
}

// Only as the entry point: the docs test imports the list of benches.
if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1])
  main().catch((err: unknown) => {
    process.stderr.write(`${(err as Error).stack ?? String(err)}\n`);
    process.exit(1);
  });
