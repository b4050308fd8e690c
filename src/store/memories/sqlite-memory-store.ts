import { mkdirSync } from "node:fs";
import { dirname, resolve } from "node:path";
import Database from "better-sqlite3";
import type { Logger } from "pino";
import type { Json } from "../../core/json";
import { text } from "../../errors/text";
import { ToolError } from "../../errors/tool-error";
import {
  type KeywordHit,
  type MemoryFilters,
  type MemoryRecord,
  type MemoryStore,
  type MemoryVector,
  type MemoryWrite,
  newestPerOlder,
  STORE_OPERATIONS,
  type StoreOperation,
  type Succession,
} from "./memory-store";

export interface SqliteMemoryStoreOptions {
  /** The database file (its directory is created), or ":memory:" for a private in-process database. */
  path: string;
  log: Logger;
}

/** How long a write waits for another connection's write lock before the call fails, ms. */
const BUSY_TIMEOUT_MS = 5000;
/** The page cache of the connection, KiB. */
const CACHE_KIB = 64 * 1024;

/**
 * The schema, one entry per `PRAGMA user_version`: entry i takes the file from
 * version i to i + 1. Append only; a released entry never changes.
 *
 * - `memories`: one row per (user_id, memory_key); the integer `id` is the FTS
 *   rowid. Times are epoch milliseconds.
 * - `memory_embeddings`: the embedding as the Float32Array's bytes
 *   (little-endian, as every platform Node runs on), apart from the memory: a
 *   2 KB blob would fill a page per memory, and a keyword search reads the
 *   memories row of every match (user, key, search text). Kept apart, the rows
 *   are dense: a search matching 80 k of 100 k memories took 225 ms with the
 *   blob in the row and 80 ms without.
 * - `memories_fts`: FTS5 over `search_text` with `memories` as its external
 *   content, kept in step by triggers, so the index changes in the same
 *   transaction as the row. The caller has already cut the text into tokens
 *   separated by spaces; unicode61 only splits on them (and folds case and
 *   diacritics, which the query side gets through the same tokenizer).
 * - `memory_keywords`: the keywords lower-cased by the application (SQLite's
 *   lower() only folds ASCII, and "Ä" must match "ä"), one row per keyword.
 *   The keyword filter is then an index range scan computed once per query
 *   instead of parsing every candidate's JSON, and rows go with their memory
 *   through the foreign key's cascade.
 * - `supersedes` (version 2): the key of an older memory this one replaces
 *   ("" for none), indexed by user for the rows that have one. A memory's
 *   successor is looked up when it is read (SUPERSEDED_BY), so nothing is
 *   kept in step when either is replaced or deleted.
 * - `sensitive` (version 3): 1 for a memory whose content only callers with
 *   the permission may read; the store keeps it, the reads redact.
 * - `stated_at` (version 4): when what the memory says was stated (epoch ms),
 *   its creation time for rows written before; a search as of a time reads it.
 * - `readiness_probe` (version 5): one row, rewritten by checkWritable() and
 *   at every start; no user data.
 */
const MIGRATIONS: readonly string[] = [
  `
  CREATE TABLE memories (
    id INTEGER PRIMARY KEY,
    user_id TEXT NOT NULL,
    memory_key TEXT NOT NULL,
    memory_type TEXT NOT NULL,
    summary TEXT NOT NULL,
    content TEXT NOT NULL,
    content_truncated INTEGER NOT NULL,
    keywords TEXT NOT NULL,
    metadata TEXT NOT NULL,
    search_text TEXT NOT NULL,
    created_at INTEGER NOT NULL,
    updated_at INTEGER NOT NULL
  );
  CREATE UNIQUE INDEX memories_user_key ON memories (user_id, memory_key);
  CREATE INDEX memories_user_created ON memories (user_id, created_at);
  CREATE INDEX memories_user_type ON memories (user_id, memory_type);

  CREATE TABLE memory_embeddings (
    memory_id INTEGER PRIMARY KEY REFERENCES memories (id) ON DELETE CASCADE,
    embedding BLOB NOT NULL
  );

  CREATE VIRTUAL TABLE memories_fts USING fts5 (
    search_text,
    content = 'memories',
    content_rowid = 'id',
    tokenize = "unicode61 remove_diacritics 2"
  );
  CREATE TRIGGER memories_fts_insert AFTER INSERT ON memories BEGIN
    INSERT INTO memories_fts (rowid, search_text) VALUES (new.id, new.search_text);
  END;
  CREATE TRIGGER memories_fts_delete AFTER DELETE ON memories BEGIN
    INSERT INTO memories_fts (memories_fts, rowid, search_text) VALUES ('delete', old.id, old.search_text);
  END;
  CREATE TRIGGER memories_fts_update AFTER UPDATE OF search_text ON memories BEGIN
    INSERT INTO memories_fts (memories_fts, rowid, search_text) VALUES ('delete', old.id, old.search_text);
    INSERT INTO memories_fts (rowid, search_text) VALUES (new.id, new.search_text);
  END;

  CREATE TABLE memory_keywords (
    memory_id INTEGER NOT NULL REFERENCES memories (id) ON DELETE CASCADE,
    user_id TEXT NOT NULL,
    keyword_lower TEXT NOT NULL,
    PRIMARY KEY (memory_id, keyword_lower)
  ) WITHOUT ROWID;
  CREATE INDEX memory_keywords_user_keyword ON memory_keywords (user_id, keyword_lower);
  `,
  `
  ALTER TABLE memories ADD COLUMN supersedes TEXT NOT NULL DEFAULT '';
  CREATE INDEX memories_user_supersedes ON memories (user_id, supersedes) WHERE supersedes <> '';
  `,
  `
  ALTER TABLE memories ADD COLUMN sensitive INTEGER NOT NULL DEFAULT 0;
  `,
  `
  ALTER TABLE memories ADD COLUMN stated_at INTEGER NOT NULL DEFAULT 0;
  UPDATE memories SET stated_at = created_at;
  `,
  `
  CREATE TABLE readiness_probe (id INTEGER PRIMARY KEY CHECK (id = 1), checked_at INTEGER NOT NULL);
  `,
];

/** The readiness probe's write: the one row of `readiness_probe`, replaced. */
const PROBE_WRITE =
  "INSERT INTO readiness_probe (id, checked_at) VALUES (1, ?) ON CONFLICT (id) DO UPDATE SET checked_at = excluded.checked_at";

const RECORD_COLUMNS =
  "memory_key, user_id, memory_type, summary, content, content_truncated, keywords, metadata, supersedes, sensitive, created_at, updated_at, stated_at";

/**
 * The newest memory of the same user naming the row `m` in its `supersedes`,
 * or "". `supersedes <> ''` lets the planner use the partial index.
 */
const SUPERSEDED_BY = `coalesce((SELECT s.memory_key FROM memories s
  WHERE s.user_id = m.user_id AND s.supersedes = m.memory_key AND s.supersedes <> ''
  ORDER BY s.updated_at DESC, s.memory_key LIMIT 1), '') AS superseded_by,
  (SELECT s.stated_at FROM memories s
  WHERE s.user_id = m.user_id AND s.supersedes = m.memory_key AND s.supersedes <> ''
  ORDER BY s.updated_at DESC, s.memory_key LIMIT 1) AS valid_until`;

interface RecordRow {
  memory_key: string;
  user_id: string;
  memory_type: string;
  summary: string;
  content: string;
  content_truncated: number;
  keywords: string;
  metadata: string;
  supersedes: string;
  sensitive: number;
  superseded_by: string;
  created_at: number;
  updated_at: number;
  stated_at: number;
  valid_until: number | null;
}

interface VectorRow {
  memory_key: string;
  embedding: Buffer;
  search_text: string;
  memory_type: string;
  created_at: number;
  updated_at: number;
  stated_at: number;
  keywords: string;
}

/**
 * The memory store in one SQLite file (better-sqlite3): the default, needing
 * no server. WAL lets readers run beside the writer; a write waits up to
 * BUSY_TIMEOUT_MS for another process's lock. better-sqlite3 is synchronous,
 * so each method is one statement or one transaction and holds the event loop
 * only for that long. synchronous = FULL: a write resolves after its commit is
 * on disk, so an acknowledged memory survives a power cut, not only a restart.
 */
export class SqliteMemoryStore implements MemoryStore {
  readonly kind = "sqlite";
  private readonly db: Database.Database;
  /** Prepared statements by SQL text; prepared on first use, after migrate() created the tables. */
  private readonly statements = new Map<string, Database.Statement>();

  constructor(private readonly opts: SqliteMemoryStoreOptions) {
    this.db = atStartUp(opts.path, () => {
      if (opts.path !== ":memory:") mkdirSync(dirname(resolve(opts.path)), { recursive: true });
      const db = new Database(opts.path);
      db.pragma("journal_mode = WAL");
      db.pragma("synchronous = FULL");
      db.pragma(`busy_timeout = ${BUSY_TIMEOUT_MS}`);
      db.pragma("foreign_keys = ON");
      // A search that matches most of a large user's memories reads their rows
      // and FTS pages each time: with the default 2 MB cache they come back
      // from the OS on every search (64 MB: about 15 % faster at 100 k).
      db.pragma(`cache_size = ${-CACHE_KIB}`);
      return db;
    });
  }

  async migrate(): Promise<void> {
    // IMMEDIATE takes the write lock before reading the version: two processes
    // starting on one file migrate one after the other, the second finding nothing to do.
    // The probe's row is written at every start: a file SQLite could only open read-only (it
    // falls back to that silently) stops start-up here rather than failing every write later.
    const apply = this.db.transaction(() => {
      const from = this.db.pragma("user_version", { simple: true }) as number;
      for (let v = from; v < MIGRATIONS.length; v++) {
        this.db.exec(MIGRATIONS[v]!);
        this.db.pragma(`user_version = ${v + 1}`);
      }
      this.stmt(PROBE_WRITE).run(Date.now());
      return from;
    });
    const from = atStartUp(this.opts.path, () => apply.immediate());
    if (from < MIGRATIONS.length)
      this.opts.log.info({ path: this.opts.path, from, to: MIGRATIONS.length }, "memory store schema migrated");
  }

  async upsert(userId: string, memory: MemoryWrite): Promise<{ created: boolean; record: MemoryRecord }> {
    const write = this.db.transaction(() => this.write(userId, memory, Date.now()));
    return this.run("store a memory", () => write.immediate());
  }

  async upsertMany(userId: string, memories: MemoryWrite[]): Promise<{ created: boolean; record: MemoryRecord }[]> {
    const now = Date.now();
    const write = this.db.transaction(() => memories.map((m) => this.write(userId, m, now)));
    return this.run("store memories", () => write.immediate());
  }

  async successorsAsOf(userId: string, memoryKeys: string[], at: Date): Promise<Succession[]> {
    if (memoryKeys.length === 0) return [];
    const rows = this.run("read successors", () =>
      this.stmt(
        `SELECT supersedes, memory_key, stated_at FROM memories
         WHERE user_id = ? AND supersedes IN (SELECT value FROM json_each(?)) AND stated_at <= ?
         ORDER BY stated_at DESC, updated_at DESC, memory_key`,
      ).all(userId, JSON.stringify(memoryKeys), at.getTime()),
    ) as { supersedes: string; memory_key: string; stated_at: number }[];
    return newestPerOlder(rows.map((r) => ({ ...r, stated_at: new Date(r.stated_at) })));
  }

  /** One memory's insert or replace, inside the caller's transaction. */
  private write(userId: string, memory: MemoryWrite, now: number): { created: boolean; record: MemoryRecord } {
    const existing = this.stmt("SELECT id FROM memories WHERE user_id = ? AND memory_key = ?").get(
      userId,
      memory.memory_key,
    ) as { id: number } | undefined;
    const row = this.stmt(
      `INSERT INTO memories (user_id, memory_key, memory_type, summary, content, content_truncated, keywords, metadata, supersedes, sensitive, search_text, created_at, updated_at, stated_at)
       VALUES (@user_id, @memory_key, @memory_type, @summary, @content, @content_truncated, @keywords, @metadata, @supersedes, @sensitive, @search_text, @now, @now, @stated_at)
       ON CONFLICT (user_id, memory_key) DO UPDATE SET
         memory_type = excluded.memory_type, summary = excluded.summary, content = excluded.content,
         content_truncated = excluded.content_truncated, keywords = excluded.keywords, metadata = excluded.metadata,
         supersedes = excluded.supersedes, sensitive = excluded.sensitive, search_text = excluded.search_text,
         updated_at = excluded.updated_at, stated_at = excluded.stated_at
       RETURNING id, ${RECORD_COLUMNS}`,
    ).get({
      user_id: userId,
      memory_key: memory.memory_key,
      memory_type: memory.memory_type,
      summary: memory.summary,
      content: memory.content,
      content_truncated: memory.content_truncated ? 1 : 0,
      keywords: JSON.stringify(memory.keywords),
      metadata: JSON.stringify(memory.metadata),
      supersedes: memory.supersedes ?? "",
      sensitive: memory.sensitive ? 1 : 0,
      search_text: memory.search_text,
      now,
      stated_at: memory.stated_at?.getTime() ?? now,
    }) as Omit<RecordRow, "superseded_by" | "valid_until"> & { id: number };
    this.stmt(
      "INSERT INTO memory_embeddings (memory_id, embedding) VALUES (?, ?) ON CONFLICT (memory_id) DO UPDATE SET embedding = excluded.embedding",
    ).run(row.id, embeddingBytes(memory.embedding));
    if (existing) this.stmt("DELETE FROM memory_keywords WHERE memory_id = ?").run(row.id);
    const addKeyword = this.stmt(
      "INSERT OR IGNORE INTO memory_keywords (memory_id, user_id, keyword_lower) VALUES (?, ?, ?)",
    );
    for (const k of memory.keywords) addKeyword.run(row.id, userId, k.keyword.toLowerCase());
    const successor = this.stmt(`SELECT ${SUPERSEDED_BY} FROM memories m WHERE m.id = ?`).get(row.id) as Pick<
      RecordRow,
      "superseded_by" | "valid_until"
    >;
    return { created: existing === undefined, record: toRecord({ ...row, ...successor }) };
  }

  async get(userId: string, memoryKey: string): Promise<MemoryRecord | undefined> {
    const row = this.run("read a memory", () =>
      this.stmt(`SELECT ${RECORD_COLUMNS}, ${SUPERSEDED_BY} FROM memories m WHERE user_id = ? AND memory_key = ?`).get(
        userId,
        memoryKey,
      ),
    ) as RecordRow | undefined;
    return row && toRecord(row);
  }

  async getMany(userId: string, memoryKeys: string[]): Promise<MemoryRecord[]> {
    if (memoryKeys.length === 0) return [];
    // The keys travel as one JSON parameter: any number of them, no SQL built from their count.
    const rows = this.run("read memories", () =>
      this.stmt(
        `SELECT ${RECORD_COLUMNS}, ${SUPERSEDED_BY} FROM memories m WHERE user_id = ? AND memory_key IN (SELECT value FROM json_each(?))`,
      ).all(userId, JSON.stringify(memoryKeys)),
    ) as RecordRow[];
    return rows.map(toRecord);
  }

  async delete(userId: string, memoryKey: string): Promise<boolean> {
    // The FTS entry goes by trigger, the embedding and keyword rows by cascade, in this statement's transaction.
    const result = this.run("delete a memory", () =>
      this.stmt("DELETE FROM memories WHERE user_id = ? AND memory_key = ?").run(userId, memoryKey),
    );
    return result.changes > 0;
  }

  async keywordSearch(userId: string, tokens: string[], filters: MemoryFilters, limit: number): Promise<KeywordHit[]> {
    const match = ftsQuery(tokens);
    if (match === undefined || limit <= 0) return [];
    // Only the clauses of the filters given are part of the SQL text (a handful
    // of shapes, each prepared once); every value is a parameter.
    const where = ["memories_fts MATCH @match", "m.user_id = @user_id"];
    const params: Record<string, unknown> = { match, user_id: userId, limit };
    if (filters.memory_types && filters.memory_types.length > 0) {
      where.push("m.memory_type IN (SELECT value FROM json_each(@types))");
      params["types"] = JSON.stringify(filters.memory_types);
    }
    if (filters.created_since) {
      where.push("m.created_at >= @since");
      params["since"] = filters.created_since.getTime();
    }
    if (filters.stated_by) {
      where.push("m.stated_at <= @stated_by");
      params["stated_by"] = filters.stated_by.getTime();
    }
    if (filters.keywords && filters.keywords.length > 0) {
      where.push(
        "m.id IN (SELECT memory_id FROM memory_keywords WHERE user_id = @user_id AND keyword_lower IN (SELECT value FROM json_each(@keywords)))",
      );
      params["keywords"] = JSON.stringify(filters.keywords.map((k) => k.toLowerCase()));
    }
    // CROSS JOIN fixes the order: the FTS index first, each match's row looked
    // up by id. Left to itself, the planner starts from an index on memories
    // when a filter offers one, and then runs the whole MATCH again for every
    // row of the user: a 10 ms search did not end within a minute at 100 k memories.
    // bm25() is smaller for better matches; the interface wants larger = better.
    const sql = `SELECT m.memory_key AS memory_key, m.search_text AS search_text, m.updated_at AS updated_at, -bm25(memories_fts) AS rank
      FROM memories_fts CROSS JOIN memories m ON m.id = memories_fts.rowid
      WHERE ${where.join(" AND ")}
      ORDER BY rank DESC, m.memory_key
      LIMIT @limit`;
    const rows = this.run("search memories by keyword", () => this.stmt(sql).all(params)) as (Omit<
      KeywordHit,
      "updated_at"
    > & { updated_at: number })[];
    return rows.map((r) => ({ ...r, updated_at: new Date(r.updated_at) }));
  }

  async vectors(userId: string): Promise<MemoryVector[]> {
    const rows = this.run("load embeddings", () =>
      this.stmt(
        "SELECT m.memory_key, e.embedding, m.search_text, m.memory_type, m.created_at, m.updated_at, m.stated_at, m.keywords FROM memories m JOIN memory_embeddings e ON e.memory_id = m.id WHERE m.user_id = ?",
      ).all(userId),
    ) as VectorRow[];
    return rows.map((r) => ({
      memory_key: r.memory_key,
      embedding: embeddingOf(r.embedding),
      search_text: r.search_text,
      memory_type: r.memory_type,
      created_at: new Date(r.created_at),
      updated_at: new Date(r.updated_at),
      stated_at: new Date(r.stated_at),
      keywords: (JSON.parse(r.keywords) as MemoryRecord["keywords"]).map((k) => k.keyword),
    }));
  }

  async count(userId: string): Promise<number> {
    const row = this.run("count memories", () =>
      this.stmt("SELECT count(*) AS n FROM memories WHERE user_id = ?").get(userId),
    ) as { n: number };
    return row.n;
  }

  /**
   * A committed write of the probe's row: SQLite appends to the WAL only at
   * commit, so a write rolled back never touches the files and passes where
   * every real write fails (the WAL unwritable: a read-only file system, an
   * immutable file). About 3 ms (one fsync); the probe route runs it at most
   * once a second. Another connection holding the write lock (another process
   * on the file) is no failure: the file takes writes, and waiting the busy
   * timeout here would hold the event loop for it.
   */
  async checkWritable(): Promise<void> {
    this.run("write the readiness probe", () => {
      this.db.pragma("busy_timeout = 0");
      try {
        this.stmt(PROBE_WRITE).run(Date.now());
      } catch (err) {
        if (!String((err as { code?: unknown }).code).startsWith("SQLITE_BUSY")) throw err;
      } finally {
        this.db.pragma(`busy_timeout = ${BUSY_TIMEOUT_MS}`);
      }
    });
  }

  async close(): Promise<void> {
    this.statements.clear();
    this.db.close();
  }

  private stmt(sql: string): Database.Statement {
    let s = this.statements.get(sql);
    if (!s) {
      s = this.db.prepare(sql);
      this.statements.set(sql, s);
    }
    return s;
  }

  /** Runs `op`, turning a database failure into a ToolError that says what failed (SQLite's words go to the log). */
  private run<T>(what: StoreOperation, op: () => T): T {
    try {
      return op();
    } catch (err) {
      throw storeError(err, what, this.opts.path);
    }
  }
}

/**
 * The FTS5 query for "any of these tokens": each token a quoted string (a
 * double quote inside doubled), so operators, column filters and parentheses
 * in it are plain text; FTS5 cuts it with the table's tokenizer, the way the
 * stored text was cut. Undefined when there is nothing to search for.
 */
function ftsQuery(tokens: string[]): string | undefined {
  const unique = [...new Set(tokens.filter((t) => t.trim() !== ""))];
  if (unique.length === 0) return undefined;
  return unique.map((t) => `"${t.replaceAll('"', '""')}"`).join(" OR ");
}

/**
 * The SQLite file cannot be opened or written when the service starts: a
 * setting or the file system to fix, said in one line naming the file.
 */
export class MemoryFileError extends Error {
  override name = "MemoryFileError";
}

/** Runs `op` of opening or migrating the file, turning any failure into a MemoryFileError. */
function atStartUp<T>(path: string, op: () => T): T {
  try {
    return op();
  } catch (err) {
    const e = err as Error & { code?: string };
    // mkdir -p through a file says EEXIST naming the file; Node's other messages name the code and the
    // path already ("EACCES: permission denied, mkdir '/…'"), SQLite's do not name the code.
    const why =
      e.code === "EEXIST" || e.code === "ENOTDIR"
        ? `${e.code}: a part of its directory path is a file, not a directory`
        : e.code && !e.message.startsWith(e.code)
          ? `${e.code}: ${e.message}`
          : e.message;
    throw new MemoryFileError(
      `the SQLite memory store ${resolve(path)} cannot be opened for writing (${why}); make the file and its directory writable by this user, or set SQLITE_PATH to a writable file`,
      { cause: err },
    );
  }
}

/**
 * Failures the operator can fix or that pass (a lock held too long, the disk
 * full or read-only, the file unreachable, the store closed at shutdown) are
 * UNAVAILABLE; anything else means a broken file or a bug here and is INTERNAL.
 */
const UNAVAILABLE_CODES = /^SQLITE_(BUSY|LOCKED|CANTOPEN|IOERR|FULL|READONLY|PERM|NOTADB)/;

function storeError(err: unknown, what: StoreOperation, path: string): ToolError {
  if (err instanceof ToolError) return err;
  const e = err as Error & { code?: string };
  const closed = e instanceof TypeError && /not open/.test(e.message);
  const fileSystem = typeof e.code === "string" && /^E[A-Z]+$/.test(e.code);
  const unavailable = closed || fileSystem || (typeof e.code === "string" && UNAVAILABLE_CODES.test(e.code));
  return new ToolError({
    code: unavailable ? "unavailable" : "internal",
    reason: unavailable ? "MEMORY_STORE_UNAVAILABLE" : "MEMORY_STORE_FAILED",
    // The file and SQLite's message (which may quote SQL) are for the operators' log only.
    message: unavailable
      ? text(`the memory store could not ${what}; retry shortly`, `记忆存储无法${STORE_OPERATIONS[what]}；请稍后重试`)
      : text(
          `internal error: the memory store failed to ${what}; report the trace_id to the service operators`,
          `内部错误：记忆存储${STORE_OPERATIONS[what]}失败；请把 trace_id 报告给服务的运维人员`,
        ),
    metadata: unavailable ? { store: "sqlite" } : {},
    privateDetail: `SQLite file ${path}: ${what}: ${e.code ? `${e.code}: ` : ""}${e.message}`,
    cause: err,
  });
}

function toRecord(row: RecordRow): MemoryRecord {
  return {
    memory_key: row.memory_key,
    user_id: row.user_id,
    memory_type: row.memory_type,
    summary: row.summary,
    content: row.content,
    content_truncated: row.content_truncated === 1,
    keywords: JSON.parse(row.keywords) as MemoryRecord["keywords"],
    metadata: JSON.parse(row.metadata) as Record<string, Json>,
    supersedes: row.supersedes,
    sensitive: row.sensitive === 1,
    superseded_by: row.superseded_by,
    created_at: new Date(row.created_at),
    updated_at: new Date(row.updated_at),
    stated_at: new Date(row.stated_at),
    ...(row.valid_until === null ? {} : { valid_until: new Date(row.valid_until) }),
  };
}

function embeddingBytes(embedding: Float32Array): Buffer {
  return Buffer.from(embedding.buffer, embedding.byteOffset, embedding.byteLength);
}

/**
 * The blob as floats. better-sqlite3 gives each blob its own memory, so it is
 * viewed in place (100 k embeddings are 200 MB); a copy only if it were not
 * aligned for a Float32Array.
 */
function embeddingOf(bytes: Buffer): Float32Array {
  if (bytes.byteOffset % Float32Array.BYTES_PER_ELEMENT === 0)
    return new Float32Array(bytes.buffer, bytes.byteOffset, bytes.byteLength / Float32Array.BYTES_PER_ELEMENT);
  return new Float32Array(bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength));
}
