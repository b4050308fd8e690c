/**
 * npm run bench: every benchmark, one after another, printing ratios measured
 * side by side in one run (absolute times are information only).
 * `npm run bench -- engine` runs the ones whose name contains "engine".
 */
import { benchEngine } from "./engine";
import { benchKeywordContext } from "./keyword-context";
import { benchKnSearch } from "./kn-search";
import { benchKnToolsQuery } from "./kntools-query";
import { benchKnToolsSchema } from "./kntools-schema";
import { benchMemoryStore } from "./memory-store";
import { benchMemRecall } from "./memrecall";
import { benchMentions } from "./mentions";
import { benchRecall } from "./recall";
import { benchResolver } from "./resolver";
import { benchTimeFacts } from "./time-facts";
import { benchTokens } from "./tokens";
import { benchUnary } from "./unary";

const benches: Record<string, () => Promise<void>> = {
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
  tokens: benchTokens,
  unary: benchUnary,
};

async function main(): Promise<void> {
  const filter = process.argv[2] ?? "";
  for (const [name, run] of Object.entries(benches)) {
    if (!name.includes(filter)) continue;
    process.stdout.write(`\n== ${name}\n`);
    await run();
  }
}

main().catch((err: unknown) => {
  process.stderr.write(`${(err as Error).stack ?? String(err)}\n`);
  process.exit(1);
});
