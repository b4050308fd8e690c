/**
 * The mixed load of issue 14: clients each calling a random one of six RPCs in
 * a loop, each client with its own account among ACCOUNTS, over any transport
 * that can make a unary call with JSON-shaped messages (snake_case field names,
 * as Connect JSON and @grpc/proto-loader with keepCase both take them).
 */

/** The RPCs of the mix, by the path of each. */
export const MIX = {
  RetrieveSchema: "contextloader.knowledge.v1.KnowledgeRetrievalService/RetrieveSchema",
  RetrieveKeywordContext: "contextloader.knowledge.v1.KnowledgeRetrievalService/RetrieveKeywordContext",
  KnSearch: "contextloader.knowledge.v1.KnowledgeRetrievalService/KnSearch",
  StoreMemory: "contextloader.memrecall.v1.MemRecallService/StoreMemory",
  SearchMemories: "contextloader.memrecall.v1.MemRecallService/SearchMemories",
  Handoff: "contextloader.memrecall.v1.MemRecallService/Handoff",
} as const;
export type RpcName = keyof typeof MIX;
export const RPC_NAMES = Object.keys(MIX) as RpcName[];

export const ACCOUNTS = 20;
/** An agent's conversation: a session takes this many calls, then the client starts another. */
const CALLS_PER_SESSION = 20;
/** A call not answered within this long counts as unanswered (the 30 s). */
export const CALL_TIMEOUT_MS = 30_000;

const KN = [{ knowledge_network_id: "kn_medical" }];
/** Diseases of the sample network, and two spellings it does not store (an alias, a typo). */
export const DISEASES = [
  "肺炎",
  "呼吸衰竭",
  "扩张型心肌病",
  "慢性胃炎",
  "肠梗阻",
  "面神经炎",
  "糖尿病肾病",
  "亚急性甲状腺炎",
  "狼疮性肾炎",
  "流行性感冒",
  "登革热",
  "青光眼",
  "慢性鼻窦炎",
  "产后抑郁",
  "前列腺癌",
  "上气道梗阻",
  "羊角风",
  "帕金深病",
];
const QUESTIONS = ["有哪些症状", "用什么药", "挂哪个科", "要做什么检查", "有哪些并发症", "的治疗方法和费用"];
const MEMORY_TOPICS = [
  ["生产环境 PostgreSQL 数据库配置", "host=pg-prod.internal port=5432 database=analytics，连接池 max_connections=200"],
  ["Redis cache settings", "Redis 7, maxmemory 2gb, allkeys-lru, used for session state of the agents"],
  ["图表偏好", "趋势图用折线图，深色主题，坐标轴从零开始，图例放在右侧"],
  ["每周销售报表", "每周一早上九点发送上周销售汇总给区域经理，按省份和产品线拆分"],
  [
    "embedding model decision",
    "we chose a 512-dimension model for memory search after comparing recall on the eval set",
  ],
  ["数据仓库分区策略", "事实表按天分区，保留 400 天，维度表全量覆盖，夜间两点跑批"],
  ["客户流失分析口径", "连续 90 天无订单视为流失，排除测试账户和内部员工账户"],
  ["on-call handbook", "page the database owner first, then the platform team; rollback within 15 minutes"],
];
const SEARCHES = [
  "我之前的数据库配置",
  "redis cache",
  "图表偏好",
  "销售报表什么时候发",
  "which embedding model did we choose",
  "分区策略",
  "流失的定义",
  "who to page when the database is down",
];

/** One call's outcome as the load driver records it. */
export interface Outcome {
  rpc: RpcName;
  ms: number;
  /** "ok", a gRPC code name in lower snake case ("resource_exhausted"), or "no answer" (over CALL_TIMEOUT_MS). */
  code: string;
}

/** One call's answer: "ok" or the error's code, and when refused, how long the server asked to wait. */
export interface Answer {
  code: string;
  retryAfterMs?: number;
}

/** Makes one unary call: the RPC, its JSON-shaped request, the caller's account. */
export type CallFn = (rpc: RpcName, body: Record<string, unknown>, accountId: string) => Promise<Answer>;

const pick = <T>(items: readonly T[]): T => items[Math.floor(Math.random() * items.length)]!;

/**
 * Runs `clients` clients until `until` (epoch ms), each calling a random RPC
 * of the mix after the last one answered. A client's first call of each
 * session is RetrieveSchema (again, until one succeeds), so keyword context
 * always has a schema to work on.
 * A refused client waits as long as the refusal asks before its next call, as
 * a well-behaved agent does.
 */
export async function runMix(opts: {
  clients: number;
  until: number;
  call: CallFn;
  label: string;
  onOutcome: (o: Outcome) => void;
}): Promise<void> {
  const client = async (i: number) => {
    const account = `load-${i % ACCOUNTS}`;
    let stored = 0;
    let session = "";
    let callsInSession = CALLS_PER_SESSION;
    let hasSchema = false;
    while (Date.now() < opts.until) {
      if (callsInSession >= CALLS_PER_SESSION) {
        session = `${opts.label}-${i}-${Math.random().toString(36).slice(2, 10)}`;
        callsInSession = 0;
        hasSchema = false;
      }
      const disease = pick(DISEASES);
      const rpc: RpcName = hasSchema ? pick(RPC_NAMES) : "RetrieveSchema";
      callsInSession++;
      const body = requestOf(rpc, { disease, session, key: `${opts.label}-${i}-${stored}` });
      if (rpc === "StoreMemory") stored++;
      const started = performance.now();
      const answer = await opts.call(rpc, body, account);
      opts.onOutcome({ rpc, ms: performance.now() - started, code: answer.code });
      if (rpc === "RetrieveSchema" && answer.code === "ok") hasSchema = true;
      if (answer.retryAfterMs !== undefined) {
        const wait = Math.min(answer.retryAfterMs, opts.until - Date.now());
        if (wait > 0) await new Promise((r) => setTimeout(r, wait));
      }
    }
  };
  await Promise.all(Array.from({ length: opts.clients }, (_, i) => client(i)));
}

/** The request of one call of the mix. */
export function requestOf(
  rpc: RpcName,
  at: { disease: string; session: string; key: string },
): Record<string, unknown> {
  switch (rpc) {
    case "RetrieveSchema":
      return { query: `${at.disease}${pick(QUESTIONS)}`, kn_ids: KN, session_id: at.session };
    case "RetrieveKeywordContext":
      return { query: at.disease, kn_ids: KN, session_id: at.session, object_type_id: "disease" };
    case "KnSearch":
      return { query: `${at.disease}${pick(QUESTIONS)}`, kn_ids: KN, session_id: at.session };
    case "StoreMemory": {
      const [summary, content] = pick(MEMORY_TOPICS);
      return {
        memory_key: at.key,
        memory_type: "project_fact",
        summary: `${summary} #${at.key}`,
        content: `${content}。${pick(SEARCHES)}；${pick(QUESTIONS)}`,
      };
    }
    case "SearchMemories":
      return { query: pick(SEARCHES) };
    case "Handoff":
      return {
        reason: "已找到相关记忆，搜索完成",
        search_summary: "找到用户之前的数据库配置",
        relevant_memory_keys: ["db_config_001"],
        confidence: 0.85,
      };
  }
}
