import type { MessageInitShape } from "@bufbuild/protobuf";
import type { Client } from "@connectrpc/connect";
import type {
  MemRecallService,
  RecallHandoff,
  RecallRequestSchema,
  RecallResponse,
  StoreMemoryRequestSchema,
} from "../../gen/contextloader/memrecall/v1/memrecall_pb";

/** Memories of one user for the Recall tests: near-duplicates, a changed preference, a sensitive one. */
export const MEMORIES: MessageInitShape<typeof StoreMemoryRequestSchema>[] = [
  {
    memoryKey: "db_config_prod",
    memoryType: "project_fact",
    summary: "生产环境 PostgreSQL 数据库配置",
    content: "生产库 host=pg-prod.internal port=5432 database=analytics，连接池 max_connections=200",
  },
  {
    memoryKey: "db_config_staging",
    memoryType: "project_fact",
    summary: "预发环境 PostgreSQL 配置",
    content: "预发库 host=pg-stg.internal port=5432 database=analytics_stg，连接池 20",
  },
  {
    memoryKey: "eta_model",
    memoryType: "project",
    summary: "ETA 预测模型项目",
    content: "特征用历史线路时效、天气和路况；目标 MAE 小于 2 小时；先用 XGBoost 做基线。",
  },
  {
    memoryKey: "plan_b",
    memoryType: "decision",
    summary: "冷数据迁移最终选了方案 B（ClickHouse 分层存储）",
    content: "3 月 12 日评审定了冷数据走方案 B，存储成本预计降 60%。",
  },
  {
    memoryKey: "chart_pref_old",
    memoryType: "user_preference",
    summary: "图表偏好：趋势用柱状图",
    content: "画趋势的时候用柱状图。",
  },
  {
    memoryKey: "chart_pref_new",
    memoryType: "user_preference",
    summary: "图表偏好改了：趋势图改用折线图",
    content: "以后趋势图都改用折线图，标出同比。",
    supersedes: "chart_pref_old",
  },
  {
    memoryKey: "billing_token",
    memoryType: "credential",
    summary: "计费系统接口的口令",
    content: "billing-api 的 token 是 sk-live-Tr0ub4dor&3",
    keywords: [
      { keyword: "口令", weight: 1 },
      { keyword: "计费", weight: 0.8 },
    ],
    sensitive: true,
  },
];

type Message = { role: string; content: string };
const conversation = (...contents: string[]): Message[] =>
  contents.map((content, i) => ({ role: (contents.length - 1 - i) % 2 === 0 ? "user" : "assistant", content }));

/** Spec §4.1: the reference names its subject. */
export const DB_CONFIG_TALK = conversation("帮我把新的报表服务接到生产库上，按照我之前的数据库配置来");
/** Spec §4.3: nothing stored answers it. */
export const NOTHING_TALK = conversation("我之前让你做的那个东西弄好了吗");
/** The subject (the ETA model) is said nine messages back: beyond a first window of five. */
export const FAR_BACK_TALK = conversation(
  "说一下 ETA 模型的事",
  "好的",
  "先帮我订个明天的会议室",
  "已为您预订明天 10 点的 3 楼会议室",
  "谢谢",
  "不客气",
  "对了",
  "请说",
  "它的目标误差定的是多少来着",
);

export type RecallRequest = MessageInitShape<typeof RecallRequestSchema>;
export type Event = RecallResponse["event"];

/** Every event of a Recall stream, in order. */
export async function events(
  client: Client<typeof MemRecallService>,
  req: RecallRequest,
  options: { headers?: Record<string, string>; timeoutMs?: number; signal?: AbortSignal } = {},
): Promise<RecallResponse[]> {
  const out: RecallResponse[] = [];
  for await (const e of client.recall(req, options)) out.push(e);
  return out;
}

/** The final handoff of a stream (its last event, which must be the only handoff). */
export function handoffOf(stream: readonly RecallResponse[]): RecallHandoff {
  const last = stream.at(-1)?.event;
  if (last?.case !== "handoff") throw new Error(`the stream did not end with a handoff: ${last?.case}`);
  if (stream.filter((e) => e.event.case === "handoff").length !== 1) throw new Error("more than one handoff");
  return last.value;
}

type Kind = NonNullable<Event["case"]>;
type ValueOf<K extends Kind> = Extract<Event, { case: K }>["value"];

/** The events of one kind, their values. */
export function ofKind<K extends Kind>(stream: readonly RecallResponse[], kind: K): ValueOf<K>[] {
  const out: ValueOf<K>[] = [];
  for (const e of stream) if (e.event.case === kind) out.push(e.event.value as ValueOf<K>);
  return out;
}

/** The stream as one line per event: what a person watching it sees. */
export function outline(stream: readonly RecallResponse[]): string[] {
  return stream.map(({ event: e }) => {
    switch (e.case) {
      case "iterationStarted":
        return `iteration ${e.value.iteration} window ${e.value.windowSize}`;
      case "toolCall":
        return `call ${e.value.name}`;
      case "toolResult":
        return `result ${e.value.name} ${e.value.ok ? "ok" : e.value.errorReason}`;
      case "windowExpanded":
        return `expanded ${e.value.fromSize}->${e.value.toSize}`;
      case "handoff":
        return `handoff ${e.value.relevantMemoryKeys.join(",")}`;
      default:
        return "?";
    }
  });
}
