import { z } from "zod";
import { zodText } from "../errors/text";
import { pathId } from "../upstream/path-ids";

/**
 * Request fields several knowledge tools share, with the same limits and
 * messages everywhere (spec keyword-context-recall §2–§4, data-retrieval-tools §7).
 */

/** Knowledge networks one call may name. */
export const MAX_KN_IDS = 20;

/** One entry of kn_ids. */
export const knIdEntry = z.object({
  knowledge_network_id: pathId(z.string().trim().min(1, zodText("required", "必填"))),
});

/** kn_ids when the call needs at least one network. */
export const requiredKnIds = z
  .array(knIdEntry)
  .min(
    1,
    zodText(
      'needs at least one knowledge network, e.g. [{"knowledge_network_id": "kn_medical"}]',
      '至少需要一个知识网络，例如 [{"knowledge_network_id": "kn_medical"}]',
    ),
  )
  .max(MAX_KN_IDS, zodText(`at most ${MAX_KN_IDS} knowledge networks`, `最多 ${MAX_KN_IDS} 个知识网络`))
  .describe('要检索的业务知识网络，如 [{"knowledge_network_id": "kn_medical"}]');

export const sessionIdField = z
  .string()
  .trim()
  .max(256, zodText("must be at most 256 characters", "不能超过 256 个字符"))
  .default("")
  .describe(
    "会话 ID：不填则新建并在回答中返回；多轮检索带上同一个（retrieve_keyword_context 必须用 retrieve_schema 返回的那个）",
  );

export const additionalContextField = z
  .string()
  .max(20_000, zodText("must be at most 20000 characters", "不能超过 20000 个字符"))
  .default("")
  .describe("补充上下文：改写后的问题、上一次检索缺了什么等，用于排序");

/** Where the session lives: "" for the default (Redis when configured), "redis" or "in_memory" (spec §2.5). */
export const sessionTypeField = z
  .enum(["", "redis", "in_memory"], {
    error: zodText('must be "redis" or "in_memory"', '必须是 "redis" 或 "in_memory"'),
  })
  .default("")
  .describe("会话保存在哪里：不填用服务默认（配置了 Redis 则 redis），或 redis、in_memory");
