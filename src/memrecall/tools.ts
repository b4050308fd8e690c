import {
  DeleteMemoryResponseSchema,
  ExpandContextWindowResponseSchema,
  ExtractSearchKeywordsResponseSchema,
  GetMemoryDetailResponseSchema,
  HandoffResponseSchema,
  RecallHandoffSchema,
  RememberConversationResponseSchema,
  SearchMemoriesResponseSchema,
  StoreMemoryResponseSchema,
} from "../../gen/contextloader/memrecall/v1/memrecall_pb";
import type { CallContext } from "../core/call-context";
import { defineTool, type Progress, type Tool } from "../core/tool";
import type { Language } from "../errors/text";
import { detailAnswer, extractionAnswer, recallAnswer, rememberAnswer, searchAnswer, storedAnswer } from "./answers";
import {
  expandContextWindowResponse,
  extractKeywordsResponse,
  handoffResponse,
  memoryDetailResponse,
  recallHandoff,
  rememberResponse,
  searchMemoriesResponse,
  storeMemoryResponse,
} from "./encode";
import { expandContextWindow } from "./expand-context-window";
import { handoff } from "./handoff";
import {
  deleteMemoryInput,
  expandContextWindowInput,
  extractKeywordsInput,
  getMemoryDetailInput,
  handoffInput,
  searchMemoriesInput,
  storeMemoryInput,
} from "./inputs";
import { extractKeywords } from "./keyword-extraction";
import type { MemRecallDeps } from "./memories-deps";
import { ownerOf } from "./owner";
import { getMemoryDetail } from "./read";
import { describeEvent, type RecallEvent, type RecallResult } from "./recall/events";
import { recallInput } from "./recall/input";
import { runRecall } from "./recall/recall";
import { rememberInput } from "./remember/input";
import { rememberConversation } from "./remember/remember";
import { searchMemories } from "./search";
import { toolDefinitions } from "./tool-definitions";
import { deleteMemory, storeMemory } from "./write";

/** The spec's tool descriptions (memrecall-tools §3), word for word: they tell the agent when to use each tool. */
const specDescriptions = {
  search_memories: `搜索用户的历史记忆。

使用场景:
1. 用户提到之前讨论过的话题时
2. 需要了解用户偏好或历史操作时
3. 需要验证或引用之前的结论时
4. 上下文出现不明确的引用时（如"按照之前的配置"）

搜索策略:
- 模糊查询时使用 search_mode="semantic"
- 有明确关键词时使用 search_mode="keyword"
- 不确定时使用默认的 "hybrid" 模式

示例:
- "我之前的数据库配置" -> keywords=["数据库", "配置"]
- "上次的方案" -> search_mode="semantic", query="上次讨论的方案"
`,
  get_memory_detail: `获取特定记忆的完整内容。

使用场景:
1. search_memories 返回的记忆摘要不完整
2. 需要查看记忆的具体内容细节
3. 需要确认记忆的具体元数据

注意: 必须通过 search_memories 获取 memory_key 后再调用此工具
`,
  extract_search_keywords: `从复杂查询中提取关键词（辅助工具）。

使用场景:
1. 用户查询很长很复杂
2. 不确定应该搜索哪些关键词
3. 需要系统性地分析用户意图

通常不需要直接调用，search_memories 会自动处理关键词提取
`,
  expand_context_window: `请求拓展上下文窗口大小。

使用场景:
1. 当前搜索结果不理想，需要查看更多历史消息
2. 用户查询涉及久远的对话，需要回溯更早的上下文
3. 当前上下文不足以理解用户意图

重要: 调用此工具后会立即结束当前迭代，系统将重新发起调用并提供更多消息！
此工具只能在未达到最大迭代次数时使用。

示例:
- reason="搜索结果太少，需要查看更早的对话来找到相关记忆"
- current_size=5, requested_size=10
`,
  handoff: `完成记忆搜索任务并结束 Agent。

使用场景:
1. 已完成记忆搜索并整理出结果
2. 无法找到相关记忆，需要报告完成情况
3. 已达到最大迭代次数，必须结束

重要: 调用此工具后 MemRecallAgent 会立即结束！这是唯一的正常退出方式。

示例:
- reason="已找到3个相关记忆，搜索完成"
- reason="达到最大迭代次数，返回当前最佳结果"
`,
};

/**
 * The MemRecall tools: the spec's five, storing and deleting a memory, and
 * the recall agent itself (`recall`, whose LLM is offered the five as
 * ListTools defines them). Like the RPCs, every one needs the caller's
 * account (`before`, checked ahead of the arguments). `maxContextWindow`
 * bounds expand_context_window and recall's window.
 */
export function memrecallTools(maxContextWindow: number): Tool<MemRecallDeps>[] {
  const before = (ctx: CallContext) => void ownerOf(ctx.caller);
  const tools: Tool<MemRecallDeps>[] = [
    defineTool({
      name: "search_memories",
      title: "搜索用户的历史记忆",
      description: specDescriptions.search_memories,
      input: searchMemoriesInput,
      before,
      output: SearchMemoriesResponseSchema,
      run: async (deps, ctx, input) => {
        const out = await searchMemories(deps, ctx, input);
        return { answer: searchAnswer(out), structured: searchMemoriesResponse(out) };
      },
    }),
    defineTool({
      name: "get_memory_detail",
      title: "获取记忆的完整内容",
      description: specDescriptions.get_memory_detail,
      input: getMemoryDetailInput,
      before,
      output: GetMemoryDetailResponseSchema,
      run: async (deps, ctx, input) => {
        const memory = await getMemoryDetail(deps, ctx, input.memory_key);
        return { answer: detailAnswer(memory), structured: memoryDetailResponse(memory) };
      },
    }),
    defineTool({
      name: "extract_search_keywords",
      title: "从查询中提取搜索关键词",
      description: specDescriptions.extract_search_keywords,
      input: extractKeywordsInput,
      before,
      output: ExtractSearchKeywordsResponseSchema,
      run: async (deps, ctx, input) => {
        const r = await extractKeywords(deps.llm, ctx, input.query, input.context, input.max_keywords);
        return { answer: extractionAnswer(r), structured: extractKeywordsResponse(r) };
      },
    }),
    defineTool({
      name: "expand_context_window",
      title: "请求拓展上下文窗口",
      description: specDescriptions.expand_context_window,
      input: expandContextWindowInput(maxContextWindow),
      before,
      output: ExpandContextWindowResponseSchema,
      run: async (_deps, ctx, input) => {
        const r = expandContextWindow(input, ctx.language);
        return { answer: { ...r }, structured: expandContextWindowResponse(r) };
      },
    }),
    defineTool({
      name: "handoff",
      title: "完成记忆搜索并结束",
      description: specDescriptions.handoff,
      input: handoffInput,
      before,
      output: HandoffResponseSchema,
      run: async (_deps, ctx, input) => {
        const r = handoff(ctx, input);
        return { answer: { message: r.message, task_completed: r.task_completed }, structured: handoffResponse(r) };
      },
    }),
    defineTool({
      name: "store_memory",
      title: "保存一条记忆",
      description: `保存（或按 memory_key 覆盖）当前用户的一条记忆，之后 search_memories 即可搜到。

使用场景：用户说出偏好、确认了结论或配置、要求"记住"某件事时。

参数要点：memory_key 由调用方决定且在该用户下唯一，同一个 key 再保存即覆盖；content 为完整内容（超过 100 KB 会被截断并标出）；summary 写一句话摘要；keywords 不给时自动提取。

返回：memory_key、created（true 为新建，false 为覆盖）、content_truncated、keywords、created_at、updated_at。`,
      input: storeMemoryInput,
      writes: true,
      before,
      output: StoreMemoryResponseSchema,
      run: async (deps, ctx, input) => {
        const stored = await storeMemory(deps, ctx, input);
        return { answer: storedAnswer(stored), structured: storeMemoryResponse(stored) };
      },
    }),
    defineTool({
      name: "remember",
      title: "从对话中保存记忆",
      description: `把一段对话变成当前用户的记忆：找出值得长期记住的内容（偏好、项目事实、决定、命令及输出、配置、人员与角色），与用户已有的相似记忆比较，逐条决定 ADD（新增）、UPDATE（同一件事，补充内容）、SUPERSEDE（偏好或事实改变：新的取代旧的，旧的保留并注明有效期至）或 NOOP（已知道）。一次对话的写入全部成功或全部不写；同一段对话再发一次不会改变任何记忆。

使用场景：对话结束或用户说"记住……""以后……"时，把对话交给它，而不是自己逐条 store_memory。

参数要点：messages 为对话（role、content，可选 time：这句话说出的时间）；memory_types 限定要保存的类型；dry_run=true 只返回决定不写入；mode 为 auto（配置了 LLM 时由 LLM 抽取与决定）或 rules（只保存明确的陈述）。

密钥、密码、私钥、带凭据的连接串、身份证号、手机号只会存入敏感记忆，不会出现在摘要、关键词或日志中。

返回：mode、applied，以及每条操作的 operation、memory_key、memory_type、summary、source_messages、reason、supersedes、sensitive、stated_at。`,
      input: rememberInput,
      writes: true,
      before,
      output: RememberConversationResponseSchema,
      run: async (deps, ctx, input) => {
        const r = await rememberConversation(deps, ctx, input);
        return { answer: rememberAnswer(r), structured: rememberResponse(r) };
      },
    }),
    defineTool({
      name: "delete_memory",
      title: "删除一条记忆",
      description: `删除当前用户按 memory_key 指定的一条记忆；删除后不可恢复，search_memories 不再返回它。

返回：deleted（true 为已删除，false 为该用户没有这条记忆）。`,
      input: deleteMemoryInput,
      writes: true,
      destructive: true,
      before,
      output: DeleteMemoryResponseSchema,
      run: async (deps, ctx, input) => {
        const deleted = await deleteMemory(deps, ctx, input.memory_key);
        return { answer: { deleted }, structured: { deleted } };
      },
    }),
  ];
  const definitions = toolDefinitions(tools);
  tools.push(
    defineTool({
      name: "recall",
      title: "召回对话所指的记忆",
      description: `记忆召回 Agent 本身：给出对话（从旧到新），找出最后一条用户消息所指的历史记忆（如"按照我之前的数据库配置来"指的是哪条配置），一次调用完成搜索、查看详情、必要时拓展上下文窗口，最后交付 handoff。

使用场景：用户提到之前的配置、决定、偏好或结论，而你不想自己组合 search_memories / get_memory_detail / expand_context_window / handoff 时。

参数要点：messages 为对话消息（role、content，可选 time），最新的在最后；context_window 为第一轮读取的最新消息数（默认 5）；max_iterations 默认 3；strategy 为 auto（配置了 LLM 时由 LLM 驱动）或 deterministic。

返回：relevant_memory_keys、confidence、needs_more_info、follow_up_question（找不到时向用户提的问题）、search_summary，以及这些记忆的完整内容（memories）和使用的 strategy。请求带 progressToken 时，每一步（迭代开始、工具调用与结果、拓展窗口）都以 notifications/progress 发出。`,
      input: recallInput(maxContextWindow),
      before,
      output: RecallHandoffSchema,
      run: async (deps, ctx, input, progress) => {
        const r = await lastOf(runRecall(deps, ctx, input, definitions), progress, ctx.language);
        return { answer: recallAnswer(r), structured: recallHandoff(r) };
      },
    }),
  );
  return tools;
}

/** Runs a recall to its handoff, telling `progress` each event before it. */
async function lastOf(
  events: AsyncGenerator<RecallEvent>,
  progress: Progress | undefined,
  language: Language,
): Promise<RecallResult> {
  for await (const e of events) {
    if (e.kind === "handoff") return e.result;
    progress?.(describeEvent(e, language));
  }
  // runRecall ends with a handoff or throws.
  throw new Error("recall ended without a handoff");
}
