import { z } from "zod";
import { parsedJson } from "../core/json";
import { zodText } from "../errors/text";

/** The most characters a memory key has. */
const MEMORY_KEY_MAX = 128;

/**
 * The one rule for a memory key wherever a memory RPC takes one (StoreMemory's
 * memory_key and supersedes, GetMemoryDetail, DeleteMemory, handoff's
 * relevant_memory_keys, Recall's tool calls): at most MEMORY_KEY_MAX
 * characters, none of them a control character. PostgreSQL cannot hold NUL,
 * and a key that one store refuses must be refused by every RPC and store
 * alike, here, naming the caller's field. "" passes: `min(1)` makes a key
 * required.
 */
const memoryKey = () =>
  z
    .string()
    .trim()
    .max(MEMORY_KEY_MAX, zodText(`must be at most ${MEMORY_KEY_MAX} characters`, `至多 ${MEMORY_KEY_MAX} 个字符`))
    .regex(
      // biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what it refuses
      /^[^\u0000-\u001f\u007f]*$/,
      zodText("must not contain control characters (NUL included)", "不能含有控制字符（包括 NUL）"),
    );

/**
 * The seven MemRecall tool inputs, in the spec's terms (snake_case, the
 * spec's limits and defaults). The service validates every request with them
 * and ListTools derives the five spec tools' JSON Schemas from them, so what
 * an agent is told is what is enforced: a `.describe()` text here is the
 * agent-facing parameter description.
 */

/** Content is capped at 100 KB (spec §6.2); longer content is cut and flagged. */
export const MAX_CONTENT_BYTES = 100 * 1024;
export const MAX_RESULTS = 10;

/** The memory types a search keeps to (none: every type): SearchMemories and Recall. */
export const memoryTypesFilter = z
  .array(z.string().trim().min(1, zodText("a memory type must not be empty", "记忆类型不能为空")).max(64))
  .max(20, zodText("at most 20 memory types", "至多 20 个记忆类型"))
  .default([]);

/** Clocks of callers and service may differ by this much: a time "now" by the caller's clock is not in the future. */
const CLOCK_SKEW_MS = 5 * 60_000;

/** A past instant in RFC 3339 (a memory's stated_at, a search's as_of), kept as the string given. */
export const statedAt = () =>
  z.iso
    .datetime({
      offset: true,
      error: zodText(
        "must be an RFC 3339 time such as 2026-03-01T10:00:00+08:00",
        "必须是 RFC 3339 时间，例如 2026-03-01T10:00:00+08:00",
      ),
    })
    .refine((t) => Date.parse(t) <= Date.now() + CLOCK_SKEW_MS, zodText("must not be in the future", "不能晚于现在"));

/** Only memories created in the last N days: SearchMemories and Recall. */
export const timeRangeDaysFilter = z
  .number()
  .int()
  .min(1, zodText("must be between 1 and 365", "必须在 1 到 365 之间"))
  .max(365, zodText("must be between 1 and 365", "必须在 1 到 365 之间"))
  .optional();
/** Iterations a recall may take when the caller does not say (spec: max_iterations). */
const DEFAULT_MAX_ITERATIONS = 3;
const MAX_ITERATIONS_LIMIT = 10;
/** Memory keys a handoff may name. */
const MAX_HANDOFF_KEYS = 50;

const keyword = z
  .string()
  .trim()
  .min(1, zodText("a keyword must not be empty", "关键词不能为空"))
  .max(64, zodText("a keyword is at most 64 characters", "关键词至多 64 个字符"));

/** search_memories (spec §2.1). */
export const searchMemoriesInput = z.object({
  query: z
    .string()
    .trim()
    .min(1, zodText("required: what to look for", "必填：要找什么"))
    .max(2000, zodText("must be at most 2000 characters", "至多 2000 个字符"))
    .describe("搜索查询，可以是自然语言描述或关键词。例如：'用户之前配置的数据库参数'"),
  // Proto JSON sends an unset string as "": that means the default.
  search_mode: z
    .preprocess(
      (m) => (m === "" ? undefined : m),
      z
        .enum(["semantic", "keyword", "hybrid"], {
          error: zodText('must be "semantic", "keyword" or "hybrid"', '必须是 "semantic"、"keyword" 或 "hybrid"'),
        })
        .default("hybrid"),
    )
    .describe("搜索模式: semantic-语义匹配, keyword-关键词匹配, hybrid-混合（默认）"),
  keywords: z
    .array(keyword)
    .max(20, zodText("at most 20 keywords", "至多 20 个关键词"))
    .default([])
    .describe("可选的精确关键词列表，用于精确过滤（记忆至少包含其中一个）。例如：['database', 'config']"),
  memory_types: memoryTypesFilter.describe("按记忆类型过滤，如 ['user_preference', 'command_output', 'general']"),
  time_range_days: timeRangeDaysFilter.describe("时间范围过滤，最近 N 天内的记忆（1-365）"),
  limit: z
    .number()
    .int()
    .min(1, zodText(`must be between 1 and ${MAX_RESULTS}`, `必须在 1 到 ${MAX_RESULTS} 之间`))
    .max(MAX_RESULTS, zodText(`must be between 1 and ${MAX_RESULTS}`, `必须在 1 到 ${MAX_RESULTS} 之间`))
    .default(5)
    .describe("返回结果数量限制（1-10，默认 5）"),
  min_relevance_score: z
    .number()
    .min(0, zodText("must be between 0 and 1", "必须在 0 到 1 之间"))
    .max(1, zodText("must be between 0 and 1", "必须在 0 到 1 之间"))
    .default(0.5)
    .describe("最小相关性分数阈值（0-1，默认 0.5），低于此值的记忆将被过滤"),
  session_id: z
    .string()
    .trim()
    .max(256)
    .default("")
    .describe("可选的召回会话ID：同一会话的搜索次数有上限（服务配置，默认 3 次），达到后应调用 handoff"),
  as_of: statedAt()
    .optional()
    .describe("可选：按某个时间点（RFC 3339）时的样子搜索：只找当时已说过的记忆，当时尚未被取代的不算过时"),
});
export type SearchMemoriesInput = z.output<typeof searchMemoriesInput>;

/** get_memory_detail (spec §2.2). */
export const getMemoryDetailInput = z.object({
  memory_key: memoryKey()
    .min(1, zodText("required: a key from SearchMemories results", "必填：SearchMemories 结果中的 key"))
    .describe("记忆的唯一标识符（从 search_memories 结果中获取）"),
});

/** extract_search_keywords (spec §2.3). */
export const extractKeywordsInput = z.object({
  query: z
    .string()
    .trim()
    .min(1, zodText("required: the user's original query", "必填：用户的原始查询"))
    .max(4000)
    .describe("用户原始查询"),
  context: z.string().max(20_000).default("").describe("可选的上下文信息，帮助更准确地提取关键词"),
  max_keywords: z
    .number()
    .int()
    .min(1, zodText("must be between 1 and 10", "必须在 1 到 10 之间"))
    .max(10, zodText("must be between 1 and 10", "必须在 1 到 10 之间"))
    .default(5)
    .describe("最多提取的关键词数量（1-10，默认 5）"),
});

/**
 * expand_context_window (spec §2.4): the spec's model, plus the iteration
 * state (current_iteration, max_iterations) that the spec passes as function
 * arguments. `maxWindow` is the largest window the service grants.
 */
export function expandContextWindowInput(maxWindow: number) {
  return z
    .object({
      reason: z
        .string()
        .trim()
        .min(1, zodText("required: say why more history is needed", "必填：说明为什么需要更多历史消息"))
        .max(2000, zodText("must be at most 2000 characters", "至多 2000 个字符"))
        .describe("需要拓展的原因，例如：'搜索结果不理想，需要查看更早的对话'"),
      current_size: z
        .number()
        .int()
        .min(0, zodText("must be at least 0", "不能小于 0"))
        .max(maxWindow, zodText(`must be at most ${maxWindow}`, `不能大于 ${maxWindow}`))
        .describe("当前使用的消息数"),
      requested_size: z
        .number()
        .int()
        .max(
          maxWindow,
          zodText(
            `must be at most ${maxWindow}, the largest window this service grants`,
            `不能大于 ${maxWindow}，即本服务允许的最大窗口`,
          ),
        )
        .describe("请求拓展到的消息数（必须大于 current_size）"),
      current_iteration: z
        .number()
        .int()
        .min(1, zodText("counts from 1", "从 1 开始计数"))
        .default(1)
        .describe("当前迭代轮数（从1开始），默认 1"),
      max_iterations: z
        .number()
        .int()
        .min(1, zodText("must be at least 1", "不能小于 1"))
        .max(
          MAX_ITERATIONS_LIMIT,
          zodText(`must be at most ${MAX_ITERATIONS_LIMIT}`, `不能大于 ${MAX_ITERATIONS_LIMIT}`),
        )
        .default(DEFAULT_MAX_ITERATIONS)
        .describe(`最大允许迭代次数，默认 ${DEFAULT_MAX_ITERATIONS}`),
    })
    .superRefine((v, ctx) => {
      if (v.requested_size <= v.current_size) {
        ctx.addIssue({
          code: "custom",
          path: ["requested_size"],
          message: zodText(
            `${v.requested_size} must be greater than current_size (${v.current_size})`,
            `${v.requested_size} 必须大于 current_size（${v.current_size}）`,
          ),
        });
      }
    });
}
export type ExpandContextWindowInput = z.output<ReturnType<typeof expandContextWindowInput>>;

/** handoff (spec §2.5), plus the `reasoning` field the spec's code reads. */
export const handoffInput = z
  .object({
    reason: z
      .string()
      .trim()
      .min(1, zodText("required: say why the task ends", "必填：说明任务为什么结束"))
      .max(2000, zodText("must be at most 2000 characters", "至多 2000 个字符"))
      .describe("结束任务的原因，例如：'已找到相关记忆，搜索完成' 或 '达到最大迭代次数，返回当前最佳结果'"),
    search_summary: z
      .string()
      .trim()
      .min(
        1,
        zodText("required: summarise what was found (or that nothing was)", "必填：总结找到了什么（或什么也没找到）"),
      )
      .max(20_000, zodText("must be at most 20000 characters", "至多 20000 个字符"))
      .describe("搜索结果的总结，包括找到的相关记忆和关键信息"),
    relevant_memory_keys: z
      .array(memoryKey().min(1, zodText("a memory key must not be empty", "记忆 key 不能为空")))
      .max(MAX_HANDOFF_KEYS, zodText(`at most ${MAX_HANDOFF_KEYS} keys`, `至多 ${MAX_HANDOFF_KEYS} 个 key`))
      .default([])
      .describe("相关记忆的 key 列表"),
    confidence: z
      .number({
        error: (issue) =>
          issue.input === undefined
            ? zodText("required (0.0..1.0)", "必填（0.0..1.0）")
            : zodText("must be a number", "必须是数字"),
      })
      .min(0, zodText("must be between 0.0 and 1.0", "必须在 0.0 到 1.0 之间"))
      .max(1, zodText("must be between 0.0 and 1.0", "必须在 0.0 到 1.0 之间"))
      .describe("对搜索结果相关性的信心度 0.0-1.0"),
    needs_more_info: z.boolean().default(false).describe("是否需要更多信息来精确定位记忆"),
    follow_up_question: z
      .string()
      .trim()
      .max(2000, zodText("must be at most 2000 characters", "至多 2000 个字符"))
      .default("")
      .describe("如果需要更多信息，向用户提出的问题"),
    iteration_used: z
      .number()
      .int()
      .min(1, zodText("counts from 1", "从 1 开始计数"))
      .default(1)
      .describe("完成时使用的迭代轮数"),
    context_window_used: z
      .number()
      .int()
      .min(0, zodText("must be at least 0", "不能小于 0"))
      .default(5)
      .describe("最终使用的上下文窗口大小（消息数）"),
    reasoning: z
      .string()
      .trim()
      .max(20_000, zodText("must be at most 20000 characters", "至多 20000 个字符"))
      .default("")
      .describe("相关性分析（可选）"),
  })
  .superRefine((v, ctx) => {
    if (v.needs_more_info && v.follow_up_question === "") {
      ctx.addIssue({
        code: "custom",
        path: ["follow_up_question"],
        message: zodText(
          "required when needs_more_info is true: it is what the user will be asked",
          "needs_more_info 为 true 时必填：这是要问用户的问题",
        ),
      });
    }
  });
export type HandoffInput = z.output<typeof handoffInput>;

/** PostgreSQL cannot store NUL in text or JSON: refused on every store, so both behave alike. */
const NUL_MESSAGE = zodText("must not contain NUL (\\u0000) characters", "不能含有 NUL（\\u0000）字符");
const hasNul = (v: unknown): boolean =>
  typeof v === "string"
    ? v.includes("\u0000")
    : Array.isArray(v)
      ? v.some(hasNul)
      : v !== null && typeof v === "object"
        ? Object.entries(v).some(([k, x]) => hasNul(k) || hasNul(x))
        : false;

/** StoreMemory: what there is to recall. */
export const storeMemoryInput = z
  .object({
    memory_key: memoryKey()
      .min(1, zodText("required", "必填"))
      .describe("记忆的唯一标识（调用方决定，本用户下唯一；同一个 key 再保存即覆盖），如 db_config_prod"),
    memory_type: z
      .string()
      .trim()
      .max(64, zodText("must be at most 64 characters", "至多 64 个字符"))
      .refine((v) => !hasNul(v), NUL_MESSAGE)
      .default("")
      .describe("记忆类型，如 user_preference、project_fact、command_output、general；search_memories 可按它过滤"),
    summary: z
      .string()
      .trim()
      .max(2000, zodText("must be at most 2000 characters", "至多 2000 个字符"))
      .refine((v) => !hasNul(v), NUL_MESSAGE)
      .default("")
      .describe("一句话摘要，搜索结果里显示"),
    content: z
      .string()
      .min(1, zodText("required", "必填"))
      .refine((v) => !hasNul(v), NUL_MESSAGE)
      .describe("完整内容（超过 100 KB 会被截断并标出）"),
    keywords: z
      .array(
        z.object({
          keyword: keyword.refine((v) => !hasNul(v), NUL_MESSAGE),
          weight: z
            .number()
            .min(0, zodText("must be between 0 and 1", "必须在 0 到 1 之间"))
            .max(1, zodText("must be between 0 and 1", "必须在 0 到 1 之间")),
        }),
      )
      .max(20, zodText("at most 20 keywords", "至多 20 个关键词"))
      .default([])
      .describe("关键词及权重（0-1）；不给时自动提取"),
    metadata: z
      .record(z.string(), parsedJson)
      .default({})
      .refine((m) => JSON.stringify(m).length <= 16_384, zodText("must be at most 16 KB of JSON", "至多 16 KB 的 JSON"))
      .refine((m) => !hasNul(m), NUL_MESSAGE)
      .describe("附加元数据（JSON 对象，至多 16 KB）"),
    supersedes: memoryKey()
      .default("")
      .describe("这条记忆取代的旧记忆的 memory_key（如偏好改了）：搜索时新的排在前面，旧的标出 superseded_by"),
    sensitive: z
      .boolean()
      .default(false)
      .describe(
        "敏感内容（密码、密钥、个人信息等）：content 与 metadata 只对带 memories:sensitive 权限的调用方可见，其他人只看到 memory_key、summary、keywords 与 redacted 标记；只按 summary 与 keywords 被搜到，需要写 summary",
      ),
    stated_at: statedAt()
      .optional()
      .describe(
        "可选：这条记忆所说的内容是何时说出或决定的（RFC 3339，不晚于现在）；默认现在。search_memories 的 as_of 按它查",
      ),
  })
  .superRefine((v, ctx) => {
    if (v.supersedes === v.memory_key) {
      ctx.addIssue({
        code: "custom",
        path: ["supersedes"],
        message: zodText(
          "a memory cannot supersede itself: name an older memory's key",
          "记忆不能取代它自己：请填一条较早记忆的 key",
        ),
      });
    }
    if (v.sensitive && v.summary === "") {
      ctx.addIssue({
        code: "custom",
        path: ["summary"],
        message: zodText(
          "a sensitive memory needs one: its content is never searched or shown without the permission, so the summary is what finds it",
          "敏感记忆必须有摘要：它的内容不会被搜索，没有权限也看不到，找到它靠的就是摘要",
        ),
      });
    }
  });
export type StoreMemoryInput = z.output<typeof storeMemoryInput>;

/** DeleteMemory: the key of the caller's memory to delete. */
export const deleteMemoryInput = z.object({
  memory_key: memoryKey()
    .min(1, zodText("required", "必填"))
    .describe("要删除的记忆的 memory_key（来自 search_memories 的结果）"),
});
