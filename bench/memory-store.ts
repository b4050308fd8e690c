import { randomUUID } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import Database from "better-sqlite3";
import pg from "pg";
import { type Logger, pino } from "pino";
import type { MemoryFilters, MemoryStore, MemoryWrite } from "../src/store/memories/memory-store";
import { PostgresMemoryStore } from "../src/store/memories/postgres-memory-store";
import { SqliteMemoryStore } from "../src/store/memories/sqlite-memory-store";
import { formatMicros, line, percentile, timeEach } from "./stats";

const DATABASE_URL = process.env["DATABASE_URL"] ?? "postgres://postgres@127.0.0.1:5432/test";
const SIZES = [10_000, 100_000];
const QUERIES = 300;
const LIMIT = 50;
const UPSERTS = 500;
const DIMS = 512;
/** Tokens per memory before de-duplication (the search text holds each token once). */
const MIN_TOKENS = 12;
const MAX_TOKENS = 28;
/** Memories per bulk-load transaction. */
const BATCH = 1000;
/** The target for keyword search at 100 k memories of one user. */
const TARGET_P95_MS = 20;
/**
 * The searches timed at each size. The filtered one is what the service sends
 * for "my plans and facts of the last days": half the types, and a time bound
 * every memory passes (they are all younger), so only the filters' cost shows.
 * Matches are counted before the filters.
 */
const SEARCHES: { mix: "common" | "rare"; filters: MemoryFilters; name: string }[] = [
  { mix: "common", filters: {}, name: "common words" },
  { mix: "rare", filters: {}, name: "rare words" },
  {
    mix: "rare",
    filters: { memory_types: ["fact", "plan"], created_since: new Date(Date.now() - 86_400_000) },
    name: "rare words, type + time filters",
  },
];

/** A store under test, and how the bench fills it faster than upsert's one commit per memory. */
interface Target {
  store: MemoryStore;
  /** Inserts new memories straight into the store's tables, a batch per transaction. */
  bulkInsert(userId: string, memories: MemoryWrite[]): Promise<void>;
  /** What the database does by itself after a large load, before users search. */
  settle(): Promise<void>;
  /** Closes the store and removes what the bench wrote. */
  dispose(userId: string): Promise<void>;
}

/**
 * Keyword search, embedding loads and upserts on both memory stores, for ONE
 * user with 10 k and then 100 k memories. Search texts are drawn from a
 * vocabulary of 300 Chinese and English words with a Zipf distribution (s = 1),
 * as natural text is. Two query mixes of 2-4 tokens (see Corpus.query): every
 * match is ranked, so latency follows the number of matches, printed beside it.
 * Embeddings are random unit vectors.
 */
export async function benchMemoryStore(): Promise<void> {
  const log = pino({ level: "silent" });
  line(
    "memory-store corpus",
    `${vocabulary().length} words (Zipf s = 1), ${MIN_TOKENS}-${MAX_TOKENS} tokens per memory, ${DIMS}-dim embeddings, one user`,
  );
  const dir = mkdtempSync(join(tmpdir(), "bench-memory-store-"));
  try {
    await benchOne(sqliteTarget(join(dir, "memories.db"), log));
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
  await benchOne(postgresTarget(log));
}

async function benchOne(target: Target): Promise<void> {
  const { store } = target;
  const userId = `bench-${randomUUID()}`;
  const corpus = new Corpus(20240601);
  try {
    await store.migrate();
    for (const size of SIZES) {
      const label = `memory-store ${store.kind} @${size / 1000}k`;
      const loaded = corpus.size;
      const loadStart = process.hrtime.bigint();
      for (let from = loaded; from < size; from += BATCH) {
        const batch = Array.from({ length: Math.min(BATCH, size - from) }, (_, i) => corpus.memory(from + i));
        await target.bulkInsert(userId, batch);
      }
      await target.settle();
      line(
        `${label}: bulk load ${size - loaded} (plain SQL)`,
        formatMicros(Number(process.hrtime.bigint() - loadStart) / 1000),
      );

      for (const { mix, filters, name } of SEARCHES) {
        const queries = Array.from({ length: QUERIES }, () => corpus.query(mix));
        const matches = queries.map((q) => corpus.matching(q)).sort((a, b) => a - b);
        for (const q of queries.slice(0, 20)) await store.keywordSearch(userId, q, filters, LIMIT); // warm the caches
        const search = await timeEach(QUERIES, (i) => store.keywordSearch(userId, queries[i]!, filters, LIMIT));
        const p95 = percentile(search, 95);
        line(
          `${label}: keywordSearch, ${name}`,
          `p50 ${formatMicros(percentile(search, 50))} p95 ${formatMicros(p95)} | matches/query p50 ${percentile(matches, 50)} p95 ${percentile(matches, 95)}` +
            (size === 100_000
              ? ` | target p95 <= ${TARGET_P95_MS} ms ${p95 <= TARGET_P95_MS * 1000 ? "met" : "MISSED"}`
              : ""),
        );
      }

      const load = await timeEach(3, () => store.vectors(userId));
      line(`${label}: vectors() (${DIMS} dims)`, `p50 ${formatMicros(percentile(load, 50))} of 3`);
    }
    // One commit each, through the store: the write path a user waits for.
    const first = corpus.size;
    const writes = await timeEach(UPSERTS, (i) => store.upsert(userId, corpus.memory(first + i)));
    line(
      `memory-store ${store.kind} @100k: upsert`,
      `p50 ${formatMicros(percentile(writes, 50))} p95 ${formatMicros(percentile(writes, 95))}`,
    );
  } finally {
    await target.dispose(userId);
  }
}

function sqliteTarget(path: string, log: Logger): Target {
  const store = new SqliteMemoryStore({ path, log });
  // A second connection to the same file, opened once the store has created the tables.
  let db: Database.Database | undefined;
  return {
    store,
    async bulkInsert(userId, memories) {
      db ??= new Database(path);
      const memory = db.prepare(
        `INSERT INTO memories (user_id, memory_key, memory_type, summary, content, content_truncated, keywords, metadata, search_text, created_at, updated_at)
         VALUES (?, ?, ?, ?, ?, 0, ?, ?, ?, ?, ?)`,
      );
      const embedding = db.prepare("INSERT INTO memory_embeddings (memory_id, embedding) VALUES (?, ?)");
      const keyword = db.prepare(
        "INSERT OR IGNORE INTO memory_keywords (memory_id, user_id, keyword_lower) VALUES (?, ?, ?)",
      );
      const now = Date.now();
      db.transaction(() => {
        for (const m of memories) {
          const { lastInsertRowid: id } = memory.run(
            userId,
            m.memory_key,
            m.memory_type,
            m.summary,
            m.content,
            JSON.stringify(m.keywords),
            JSON.stringify(m.metadata),
            m.search_text,
            now,
            now,
          );
          embedding.run(id, Buffer.from(m.embedding.buffer, m.embedding.byteOffset, m.embedding.byteLength));
          for (const k of m.keywords) keyword.run(id, userId, k.keyword.toLowerCase());
        }
      })();
    },
    async settle() {},
    async dispose() {
      db?.close();
      await store.close();
    },
  };
}

function postgresTarget(log: Logger): Target {
  const store = new PostgresMemoryStore({ connectionString: DATABASE_URL, log });
  const admin = new pg.Client({ connectionString: DATABASE_URL });
  const connected = admin.connect();
  return {
    store,
    async bulkInsert(userId, memories) {
      await connected;
      const column = <T>(f: (m: MemoryWrite) => T) => memories.map(f);
      await admin.query(
        `INSERT INTO memories (user_id, memory_key, memory_type, summary, content, content_truncated, keywords, keywords_lower, metadata, search_text, embedding, created_at, updated_at)
         SELECT $1, k, t, s, c, false, kw::jsonb, ARRAY(SELECT jsonb_array_elements_text(kl::jsonb)), md::jsonb, st, e, now(), now()
         FROM unnest($2::text[], $3::text[], $4::text[], $5::text[], $6::text[], $7::text[], $8::text[], $9::text[], $10::bytea[]) AS x(k, t, s, c, kw, kl, md, st, e)`,
        [
          userId,
          column((m) => m.memory_key),
          column((m) => m.memory_type),
          column((m) => m.summary),
          column((m) => m.content),
          column((m) => JSON.stringify(m.keywords)),
          column((m) => JSON.stringify(m.keywords.map((k) => k.keyword.toLowerCase()))),
          column((m) => JSON.stringify(m.metadata)),
          column((m) => m.search_text),
          column((m) => Buffer.from(m.embedding.buffer, m.embedding.byteOffset, m.embedding.byteLength)),
        ],
      );
    },
    // Autovacuum's work after a load: planner statistics, and the GIN pending list merged into the index.
    async settle() {
      await connected;
      await admin.query("VACUUM ANALYZE memories");
    },
    async dispose(userId) {
      await store.close();
      await connected;
      await admin.query("DELETE FROM memories WHERE user_id = $1", [userId]);
      await admin.end();
    },
  };
}

/**
 * Synthetic memories, reproducible from a seed, with an inverted index of
 * what was generated so each query's true number of matches can be reported.
 */
class Corpus {
  private readonly random: () => number;
  private readonly vocabulary = vocabulary();
  /** Cumulative Zipf weights over the vocabulary's ranks. */
  private readonly cumulative: Float64Array;
  private readonly postings = new Map<string, number[]>();
  private readonly seen = new Uint32Array(Math.max(...SIZES) + UPSERTS);
  private stamp = 0;
  size = 0;

  constructor(seed: number) {
    this.random = mulberry32(seed);
    this.cumulative = new Float64Array(this.vocabulary.length);
    let total = 0;
    this.vocabulary.forEach((_, rank) => {
      total += 1 / (rank + 1);
      this.cumulative[rank] = total;
    });
    this.cumulative.forEach((c, i) => {
      this.cumulative[i] = c / total;
    });
  }

  memory(index: number): MemoryWrite {
    const count = MIN_TOKENS + Math.floor(this.random() * (MAX_TOKENS - MIN_TOKENS + 1));
    const tokens = [...new Set(Array.from({ length: count }, () => this.word()))];
    for (const t of tokens) {
      const list = this.postings.get(t) ?? [];
      list.push(index);
      this.postings.set(t, list);
    }
    this.size = index + 1;
    return {
      memory_key: `m${index}`,
      memory_type: ["fact", "preference", "event", "plan"][index % 4]!,
      summary: tokens.slice(0, 6).join(""),
      content: tokens.join(" "),
      content_truncated: false,
      keywords: tokens.slice(0, 2).map((keyword, i) => ({ keyword, weight: 1 - i * 0.2 })),
      metadata: { source: "bench", index },
      search_text: tokens.join(" "),
      embedding: this.unitVector(),
    };
  }

  /**
   * 2-4 tokens: "common" draws them as the memories were written (most
   * queries then hold a word found in most memories, as "的" or "the" would);
   * "rare" draws uniformly from the less frequent half of the vocabulary.
   */
  query(mix: "common" | "rare"): string[] {
    const n = 2 + Math.floor(this.random() * 3);
    const half = Math.floor(this.vocabulary.length / 2);
    const draw =
      mix === "common"
        ? () => this.word()
        : () => this.vocabulary[half + Math.floor(this.random() * (this.vocabulary.length - half))]!;
    return [...new Set(Array.from({ length: n }, draw))];
  }

  /** How many generated memories contain any of the tokens. */
  matching(tokens: string[]): number {
    this.stamp++;
    let n = 0;
    for (const t of tokens) {
      for (const doc of this.postings.get(t) ?? []) {
        if (this.seen[doc] !== this.stamp) {
          this.seen[doc] = this.stamp;
          n++;
        }
      }
    }
    return n;
  }

  private word(): string {
    const u = this.random();
    let lo = 0;
    let hi = this.cumulative.length - 1;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (this.cumulative[mid]! < u) lo = mid + 1;
      else hi = mid;
    }
    return this.vocabulary[lo]!;
  }

  private unitVector(): Float32Array {
    const v = new Float32Array(DIMS);
    let norm = 0;
    for (let i = 0; i < DIMS; i++) {
      // Box-Muller: normal components make the direction uniform on the sphere.
      const x = Math.sqrt(-2 * Math.log(1 - this.random())) * Math.cos(2 * Math.PI * this.random());
      v[i] = x;
      norm += x * x;
    }
    norm = Math.sqrt(norm);
    for (let i = 0; i < DIMS; i++) v[i] = v[i]! / norm;
    return v;
  }
}

/**
 * 300 words: 200 Chinese two-character tokens paired from common morphemes
 * (not all real words, which does not matter to the stores) and 100 English
 * words, interleaved so both languages have common and rare words.
 */
function vocabulary(): string[] {
  const morphemes = [
    ..."数据库配置网络服务用户系统文件时间会议项目计划报告客户产品市场销售财务预算合同设计开发测试部署监控日志安全权限缓存迁移备份",
  ];
  const chinese: string[] = [];
  for (let i = 0; chinese.length < 200; i++) {
    const a = morphemes[i % morphemes.length]!;
    const b = morphemes[(i * 7 + Math.floor(i / morphemes.length) + 1) % morphemes.length]!;
    if (a !== b && !chinese.includes(a + b)) chinese.push(a + b);
  }
  const english = (
    "meeting project deadline budget report customer product market sales finance contract design develop test deploy monitor " +
    "server database cache backup restore migrate network security access token password account profile setting config " +
    "timeout retry error warning latency throughput memory disk storage cluster replica index query schema table column " +
    "invoice payment order shipping delivery warehouse supplier vendor partner team manager engineer review approve reject " +
    "travel hotel flight ticket dinner lunch coffee birthday holiday weekend family doctor hospital medicine exercise diet " +
    "python typescript golang rust kubernetes docker linux redis postgres sqlite kafka grafana prometheus jenkins github gitlab " +
    "music movie book garden weather school"
  ).split(" ");
  return chinese.flatMap((c, i) => (i % 2 === 0 && english[i / 2] ? [c, english[i / 2]!] : [c]));
}

/** A small seeded PRNG: the same corpus and queries every run. */
function mulberry32(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}
