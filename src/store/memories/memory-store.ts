import type { Json } from "../../core/json";

/**
 * What a memory store was doing when it failed, in English (the log's words and
 * the key) and Chinese: a store's error tells the caller which, in the caller's language.
 */
export const STORE_OPERATIONS = {
  "migrate the schema": "迁移表结构",
  "store a memory": "保存记忆",
  "store memories": "保存多条记忆",
  "read successors": "读取取代它们的记忆",
  "read a memory": "读取记忆",
  "read memories": "读取多条记忆",
  "delete a memory": "删除记忆",
  "search memories by keyword": "按关键词搜索记忆",
  "load embeddings": "加载向量",
  "count memories": "统计记忆数量",
  "write the readiness probe": "写入就绪探测",
} as const;

export type StoreOperation = keyof typeof STORE_OPERATIONS;

/** What a memory holds, as written and as read back. */
interface MemoryFields {
  memory_key: string;
  memory_type: string;
  summary: string;
  content: string;
  /** True when the content was cut at the size limit when stored. */
  content_truncated: boolean;
  keywords: { keyword: string; weight: number }[];
  metadata: Record<string, Json>;
}

/** A stored memory, as read back. */
export interface MemoryRecord extends MemoryFields {
  /** Stored as sensitive: its content and metadata are shown only to callers with the permission (spec §7). */
  sensitive: boolean;
  /** The key of an older memory of the user's that this one replaces ("" when none): latest wins in search. */
  supersedes: string;
  user_id: string;
  created_at: Date;
  updated_at: Date;
  /** When what it says was stated (a conversation's message time, or when it was first stored). */
  stated_at: Date;
  /** When its successor (superseded_by) was stated: until then it held. Undefined while it holds. */
  valid_until?: Date;
  /**
   * The newest memory of the user's that names this one in `supersedes` ("" when none), found when read:
   * it follows every write and delete of the other memory without being kept in step.
   */
  superseded_by: string;
}

/** What a write stores: the memory plus what search needs. */
export interface MemoryWrite extends MemoryFields {
  /** The key of an older memory of the user's that this one replaces; none when absent or "". */
  supersedes?: string;
  /** Sensitive content (see MemoryRecord.sensitive); false when absent. */
  sensitive?: boolean;
  /** When what it says was stated; now when absent. */
  stated_at?: Date;
  /** The searchable tokens, space-separated (jieba for Chinese, lower-cased words for English). */
  search_text: string;
  /** The embedding of summary + content (L2-normalised). */
  embedding: Float32Array;
}

/** Filters every search applies before ranking. */
export interface MemoryFilters {
  /** Only these memory types (any of them). */
  memory_types?: string[];
  /** Only memories created at or after this instant. */
  created_since?: Date;
  /** Only memories carrying at least one of these keywords (exact, case-insensitive). */
  keywords?: string[];
  /** Only memories stated at or before this instant (a search as of a time). */
  stated_by?: Date;
}

/** A keyword search hit: the memory and the tokens it is searched by. */
export interface KeywordHit {
  memory_key: string;
  search_text: string;
  /** When the memory was last written: the newer of two equally relevant memories comes first. */
  updated_at: Date;
  /** The store's own rank (bm25 / ts_rank): larger is better; comparable within one answer only. */
  rank: number;
}

/** What the in-process search index holds of a memory: its embedding, its search tokens, and what the filters look at. */
export interface MemoryVector {
  memory_key: string;
  embedding: Float32Array;
  /** The searchable tokens, space-separated, as written. */
  search_text: string;
  memory_type: string;
  created_at: Date;
  /** When the memory was last written: the newer of two equally relevant memories comes first. */
  updated_at: Date;
  stated_at: Date;
  keywords: string[];
}

/** A memory naming another in `supersedes`: the older one's successor, and when the successor was stated. */
export interface Succession {
  /** The older memory. */
  supersedes: string;
  /** The memory replacing it. */
  memory_key: string;
  stated_at: Date;
}

/**
 * Durable storage of users' memories: SQLite (the default, a file under
 * ./data, FTS5) or PostgreSQL (tsvector with a GIN index). Every method is
 * scoped to one user by a parameterised `user_id`: no call can read or change
 * another user's rows. Writes resolve only after they are committed.
 */
export interface MemoryStore {
  readonly kind: "sqlite" | "postgres";
  /** Creates or upgrades the schema; safe to run at every start. */
  migrate(): Promise<void>;
  /** Creates the memory, or replaces the user's memory with that key; `created` tells which. */
  upsert(userId: string, memory: MemoryWrite): Promise<{ created: boolean; record: MemoryRecord }>;
  /** upsert of each, in one transaction: all are written or none. */
  upsertMany(userId: string, memories: MemoryWrite[]): Promise<{ created: boolean; record: MemoryRecord }[]>;
  /**
   * For each of `memoryKeys`, its newest successor stated at or before `at`
   * (the memories naming it in `supersedes`): what replaced it as of then.
   */
  successorsAsOf(userId: string, memoryKeys: string[], at: Date): Promise<Succession[]>;
  get(userId: string, memoryKey: string): Promise<MemoryRecord | undefined>;
  /** The user's memories with these keys, in any order; unknown keys are skipped. */
  getMany(userId: string, memoryKeys: string[]): Promise<MemoryRecord[]>;
  /** True when a memory was deleted. */
  delete(userId: string, memoryKey: string): Promise<boolean>;
  /** Memories whose search text contains any of `tokens` (OR), best `limit` first, after the filters. */
  keywordSearch(userId: string, tokens: string[], filters: MemoryFilters, limit: number): Promise<KeywordHit[]>;
  /** Every memory of the user as the in-process search index needs it (embedding, search text, filter fields). */
  vectors(userId: string): Promise<MemoryVector[]>;
  count(userId: string): Promise<number>;
  /**
   * Resolves when the store takes a write, without writing any user's data
   * (readiness: a store that answers reads but refuses writes is not ready).
   */
  checkWritable(): Promise<void>;
  close(): Promise<void>;
}

/** The first succession of each older memory: given newest first, its newest successor. */
export function newestPerOlder(rows: Succession[]): Succession[] {
  const seen = new Set<string>();
  return rows.filter((r) => !seen.has(r.supersedes) && seen.add(r.supersedes));
}
