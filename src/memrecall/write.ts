import type { CallContext } from "../core/call-context";
import { type Text, text } from "../errors/text";
import { type FieldViolation, invalidArgument } from "../errors/tool-error";
import type { MemoryRecord, MemoryWrite } from "../store/memories/memory-store";
import { MAX_CONTENT_BYTES, type StoreMemoryInput } from "./inputs";
import { extractLocally } from "./keyword-extraction";
import type { MemoriesDeps } from "./memories-deps";
import { bumpVersion, ownerOf } from "./owner";
import { findSecrets, type SecretKind } from "./remember/secrets";
import { searchTextOf } from "./search-text";

/** Keywords extracted for a memory stored without any. */
const STORED_KEYWORDS = 8;
/** Characters of a memory that go into its embedding (endpoints limit input size). */
const EMBED_CHARS = 8000;
/** Links followed from the memory a write supersedes, looking for one back to the memory written. */
const MAX_SUPERSEDES_CHAIN = 100;

export interface StoredMemory {
  record: MemoryRecord;
  created: boolean;
}

/**
 * StoreMemory: creates the memory or replaces the caller's memory with that
 * key (memoryWrite, commitWrites). `supersedes` must name another memory of
 * the caller's that does not already replace this one.
 */
export async function storeMemory(
  deps: MemoriesDeps,
  ctx: CallContext,
  input: StoreMemoryInput,
): Promise<StoredMemory> {
  const owner = ownerOf(ctx.caller);
  checkSecrets(input);
  if (input.supersedes !== "") await checkSupersedes(deps, owner, input.memory_key, input.supersedes);
  const memory = await memoryWrite(deps, ctx, input);
  const [result] = await commitWrites(deps, ctx, owner, [memory]);
  const bytes = Buffer.byteLength(memory.content);
  ctx.log.info(
    { memory_key: input.memory_key, created: result!.created, truncated: memory.content_truncated, bytes },
    "memory stored",
  );
  return result!;
}

/**
 * The write of a memory: content over 100 KB (spec §6.2) cut at a character
 * boundary and flagged, keywords extracted when none are given (jieba TF-IDF),
 * its search text (its words and the glossary groups it names) and its
 * embedding. A sensitive memory is indexed by its summary and keywords only.
 */
export async function memoryWrite(deps: MemoriesDeps, ctx: CallContext, input: StoreMemoryInput): Promise<MemoryWrite> {
  const { text: content, truncated } = capBytes(input.content, MAX_CONTENT_BYTES);
  // A sensitive memory is indexed by its summary and keywords only: were its content
  // searchable, a caller without the permission could probe what it says word by word.
  const searchable = input.sensitive ? "" : content;
  const keywords =
    input.keywords.length > 0
      ? input.keywords
      : extractLocally(`${input.summary}\n${searchable.slice(0, 20_000)}`, "", STORED_KEYWORDS).map(
          ({ keyword, weight }) => ({ keyword, weight }),
        );
  const keywordText = keywords.map((k) => k.keyword).join(" ");
  const [embedding] = await deps.embedder.embed(ctx, [
    `${input.summary}\n${input.sensitive ? keywordText : content}`.slice(0, EMBED_CHARS),
  ]);
  return {
    memory_key: input.memory_key,
    memory_type: input.memory_type,
    summary: input.summary,
    content,
    content_truncated: truncated,
    keywords,
    metadata: input.metadata,
    supersedes: input.supersedes,
    sensitive: input.sensitive,
    ...(input.stated_at !== undefined ? { stated_at: new Date(input.stated_at) } : {}),
    search_text: searchTextOf([input.summary, searchable, keywordText], deps.glossary),
    embedding: embedding!,
  };
}

/**
 * Writes the memories in one transaction (all or none), one owner's writes at
 * a time, then tells the caller's caches and index about each: acknowledged
 * only after the store committed, so the next search finds them.
 */
export async function commitWrites(
  deps: MemoriesDeps,
  ctx: CallContext,
  owner: string,
  memories: MemoryWrite[],
  beforeWrite?: () => Promise<void>,
): Promise<StoredMemory[]> {
  return deps.index.serially(owner, async () => {
    await beforeWrite?.();
    const written =
      memories.length === 1
        ? [await deps.store.upsert(owner, memories[0]!)]
        : await deps.store.upsertMany(owner, memories);
    for (const [i, w] of written.entries()) {
      await bumpVersion(deps, ctx, owner, {
        put: {
          memory_key: w.record.memory_key,
          embedding: memories[i]!.embedding,
          search_text: memories[i]!.search_text,
          memory_type: w.record.memory_type,
          created_at: w.record.created_at,
          updated_at: w.record.updated_at,
          stated_at: w.record.stated_at,
          keywords: w.record.keywords.map((k) => k.keyword),
        },
      });
    }
    return written;
  });
}

/** DeleteMemory: true when the caller had a memory with that key. */
export async function deleteMemory(deps: MemoriesDeps, ctx: CallContext, memoryKey: string): Promise<boolean> {
  const owner = ownerOf(ctx.caller);
  return deps.index.serially(owner, async () => {
    const deleted = await deps.store.delete(owner, memoryKey);
    if (deleted) await bumpVersion(deps, ctx, owner, { remove: memoryKey });
    return deleted;
  });
}

/** What StoreMemory refuses to show: credentials. A phone or ID number is the caller's to judge. */
const CREDENTIALS: ReadonlySet<SecretKind> = new Set(["private_key", "token", "password", "credentials"]);
const SECRET_NAMES: Record<SecretKind, Text> = {
  private_key: text("a private key", "私钥"),
  token: text("a token or key", "令牌或密钥"),
  password: text("a password", "密码"),
  credentials: text("a connection string's password", "连接串中的密码"),
  id_number: text("an ID number", "身份证号"),
  phone: text("a phone number", "电话号码"),
};

/**
 * A credential the scanner recognises (the one RememberConversation uses)
 * is never where a caller without the sensitive scope sees or searches: not
 * in a summary or keyword (shown to every caller, and what a sensitive
 * memory is indexed by), and in content only when the memory is sensitive.
 * The caller is told which field and why, and stores it again; nothing is
 * hidden or flagged behind its back.
 */
function checkSecrets(input: StoreMemoryInput): void {
  const credential = (text: string) => findSecrets(text).find((s) => CREDENTIALS.has(s.kind))?.kind;
  const violations: FieldViolation[] = [];
  const inSummary = credential(input.summary);
  if (inSummary)
    violations.push({
      field: "summary",
      description: text(
        `holds ${SECRET_NAMES[inSummary].en}; every caller sees and searches the summary: say what the memory is for, without the secret`,
        `含有${SECRET_NAMES[inSummary].zh}；每个调用方都能看到并搜索摘要：请说明这条记忆的用途，不要写入机密`,
      ),
    });
  input.keywords.forEach((k, i) => {
    const kind = credential(k.keyword);
    if (kind)
      violations.push({
        field: `keywords[${i}]`,
        description: text(
          `holds ${SECRET_NAMES[kind].en}; every caller sees and searches keywords`,
          `含有${SECRET_NAMES[kind].zh}；每个调用方都能看到并搜索关键词`,
        ),
      });
  });
  const inContent = input.sensitive ? undefined : credential(input.content);
  if (inContent)
    violations.push({
      field: "sensitive",
      description: text(
        `must be true: the content holds ${SECRET_NAMES[inContent].en} (a sensitive memory's content is shown only with the memories:sensitive scope and never searched); or store it without the secret`,
        `必须为 true：内容含有${SECRET_NAMES[inContent].zh}（敏感记忆的内容只对有 memories:sensitive 权限的调用方显示，且不会被搜索）；或去掉机密后再保存`,
      ),
    });
  if (violations.length > 0)
    throw invalidArgument(violations, {
      message: text(
        "Call StoreMemory again with the secret only in content, sensitive: true, and a summary that says what it is for.",
        "重新调用 StoreMemory：机密只放在 content 中，设置 sensitive: true，并用摘要说明它的用途。",
      ),
    });
}

/**
 * The memory `supersedes` names must be the caller's, and must not replace
 * the memory being written, directly or down its own chain: two memories
 * replacing each other would both count as outdated.
 */
export async function checkSupersedes(
  deps: MemoriesDeps,
  owner: string,
  key: string,
  supersedes: string,
): Promise<void> {
  const hint = {
    message: text(
      "supersedes names the memory_key of an older memory of yours (from SearchMemories), or is left empty.",
      "supersedes 填你的一条较早记忆的 memory_key（来自 SearchMemories），或留空。",
    ),
    nextRpc: "contextloader.memrecall.v1.MemRecallService/SearchMemories",
  };
  let older = await deps.store.get(owner, supersedes);
  if (!older) {
    throw invalidArgument(
      [
        {
          field: "supersedes",
          description: text(`you have no memory with the key ${supersedes}`, `你没有 key 为 ${supersedes} 的记忆`),
        },
      ],
      hint,
    );
  }
  for (let step = 0; older && older.supersedes !== "" && step < MAX_SUPERSEDES_CHAIN; step++) {
    if (older.supersedes === key) {
      throw invalidArgument(
        [
          {
            field: "supersedes",
            description: text(
              `${supersedes} already replaces ${key} (through its supersedes): two memories cannot replace each other`,
              `${supersedes} 已经（通过它的 supersedes）取代了 ${key}：两条记忆不能互相取代`,
            ),
          },
        ],
        hint,
      );
    }
    older = await deps.store.get(owner, older.supersedes);
  }
}

/** `text` cut to at most `maxBytes` of UTF-8 without splitting a character. */
function capBytes(text: string, maxBytes: number): { text: string; truncated: boolean } {
  if (Buffer.byteLength(text) <= maxBytes) return { text, truncated: false };
  let bytes = 0;
  let end = 0;
  for (const ch of text) {
    const size = Buffer.byteLength(ch);
    if (bytes + size > maxBytes) break;
    bytes += size;
    end += ch.length;
  }
  return { text: text.slice(0, end), truncated: true };
}
