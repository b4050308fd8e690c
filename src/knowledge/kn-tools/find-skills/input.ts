import { z } from "zod";
import { zodText } from "../../../errors/text";
import { pathId } from "../../../upstream/path-ids";
import { identitySchema } from "../action-info/input";

/** Instances one call may name: they become one or-group of the platform's condition (at most 100 sub-conditions). */
export const MAX_SKILL_INSTANCES = 100;
export const MAX_TOP_K = 20;

const OBJECT_TYPE_REQUIRED = zodText(
  'required: an object type id from search_schema, or "skills" for every skill',
  '必填：search_schema 返回的对象类型id，或用 "skills" 表示全部技能',
);
const TOP_K_WHOLE = zodText(`must be a whole number from 1 to ${MAX_TOP_K}`, `必须是 1 到 ${MAX_TOP_K} 之间的整数`);
const TOP_K_RANGE = zodText(`must be from 1 to ${MAX_TOP_K}`, `必须在 1 到 ${MAX_TOP_K} 之间`);

/** Input of FindSkills (the platform's find_skills). */
export const findSkillsInput = z.object({
  kn_id: z.string().trim().default("").describe("业务知识网络 ID，如 kn_medical；不传时使用连接的 x-kn-id 请求头"),
  object_type_id: pathId(z.string({ error: OBJECT_TYPE_REQUIRED }).trim().min(1, OBJECT_TYPE_REQUIRED)).describe(
    "要找技能的对象类型 ID（取自 search_schema），如 disease；传 skills 则在全部技能中查找",
  ),
  instance_identities: z
    .array(identitySchema)
    .max(MAX_SKILL_INSTANCES, zodText(`at most ${MAX_SKILL_INSTANCES} instances`, `最多 ${MAX_SKILL_INSTANCES} 个实例`))
    .default([])
    .transform((list) => list.filter((identity) => Object.keys(identity).length > 0))
    .describe(
      '只找绑定到这些实例的技能：每个一个完整的主键映射，原样取自 query_object_instance 返回的 _instance_identity，如 [{"disease_id": "disease_004790"}]（注意参数名没有下划线前缀）',
    ),
  skill_query: z
    .string()
    .trim()
    .max(1000, zodText("must be at most 1000 characters", "不能超过 1000 个字符"))
    .default("")
    .describe(
      "按技能名称和说明筛选并排序，如“急救”“随访”：只返回与之相关的技能，没有相关的则不返回技能并在 message 中说明；不传则返回全部可用技能",
    ),
  top_k: z
    .number({ error: TOP_K_WHOLE })
    .int(TOP_K_WHOLE)
    .min(1, TOP_K_RANGE)
    .max(MAX_TOP_K, TOP_K_RANGE)
    .default(10)
    .describe(`最多返回几个技能（1-${MAX_TOP_K}，默认 10）`),
});
export type FindSkillsInput = z.output<typeof findSkillsInput>;
