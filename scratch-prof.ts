import { randomUUID } from "node:crypto";
import { readFileSync } from "node:fs";
import { pino } from "pino";
import { searchMemories, storeMemory } from "./src/memrecall/memories";
import { searchMemoriesInput, storeMemoryInput } from "./src/memrecall/tool-inputs";
import { searchTextOf, searchTokens, lookupTokens } from "./src/memrecall/search-text";
import { VectorIndex } from "./src/memrecall/vector-index";
import { MemorySessionStore } from "./src/store/memory-session-store";
import { SqliteMemoryStore } from "./src/store/sqlite-memory-store";
import { localEmbedder } from "./src/upstream/embeddings";
import { embedLocally } from "./src/upstream/local-embedder";
const log = pino({ level: "silent" });
const data = JSON.parse(readFileSync("bench/memrecall-eval.json", "utf8"));
const store = new SqliteMemoryStore({ path: "/tmp/prof.db", log });
await store.migrate();
const deps = { store, sessions: new MemorySessionStore({ maxValueBytes: 1 << 20, maxEntries: 100000, log }), embedder: localEmbedder, llm: undefined, vectors: new VectorIndex(store, 4), maxSearchesPerSession: 3, semanticFloor: 0.15, semanticCeiling: 0.6 };
const ctx = { identity: { accountId: "p", accountType: "user" as const }, traceId: "x", log, signal: new AbortController().signal, remainingMs: () => undefined };
const N = Number(process.env.N ?? 10000);
if ((await store.count("user:p")) < N) {
  const words = data.memories.flatMap((m: any) => `${m.summary} ${m.content}`.split(/[\s，。；：、,.;:()（）]+/).filter((w: string) => w.length > 1));
  let seed = 42; const next = () => (seed = (seed * 1103515245 + 12345) & 0x7fffffff);
  for (let i = await store.count("user:p"); i < N; i++) {
    const pick = () => words[next() % words.length];
    const summary = Array.from({ length: 4 }, pick).join(" "), content = Array.from({ length: 18 }, pick).join(" ");
    await store.upsert("user:p", { memory_key: `f${i}`, memory_type: "general", summary, content, content_truncated: false, keywords: [], metadata: {}, search_text: searchTextOf([summary, content]), embedding: embedLocally(`${summary}\n${content}`) });
  }
}
await storeMemory(deps, ctx, storeMemoryInput.parse({ memory_key: "marker", content: "x" + randomUUID() }));
const t = (label: string, us: number[]) => { us.sort((a, b) => a - b); console.log(label, "p50", us[us.length >> 1]!.toFixed(2), "p95", us[Math.floor(us.length * 0.95)]!.toFixed(2)); };
for (const mode of ["keyword", "semantic", "hybrid"]) {
  const all: number[] = [], st: number[] = [];
  for (let r = 0; r < 3; r++) for (const [i, q] of data.queries.entries()) {
    const s0 = performance.now();
    await searchMemories(deps, ctx, searchMemoriesInput.parse({ query: `${q.query} ${r}${i}`, search_mode: mode, min_relevance_score: 0 }));
    all.push(performance.now() - s0);
    if (mode === "keyword") { const s1 = performance.now(); await store.keywordSearch("user:p", lookupTokens(searchTokens(q.query), []), {}, 50); st.push(performance.now() - s1); }
  }
  t(mode, all); if (st.length) t("  store.keywordSearch", st);
}
