import type { CallContext } from "../../../core/call-context";
import { text } from "../../../errors/text";
import { type FieldViolation, invalidArgument, ToolError } from "../../../errors/tool-error";
import type { KnowledgeNetworkBackend } from "../../../kn/backend";
import type { Condition, InstanceIdentity, ObjectType } from "../../../kn/types";
import { objectTypeOf } from "../conditions/schema-lookup";

/** The object type that holds a network's skills (the platform's skills_object_type_id). */
export const SKILLS_TYPE_ID = "skills";
/** What find_skills needs of it; `description` is read when it has one. */
const REQUIRED_PROPERTIES = ["skill_id", "name"];
/** The properties skill_query searches. */
const SEARCHED_PROPERTIES = ["name", "description"];

/**
 * The network's skills object type, checked against find_skills' contract:
 * missing is NOT_FOUND, without skill_id or name FAILED_PRECONDITION naming
 * what is missing. Neither is the caller's to fix, and the message says so.
 * A network that does not exist is not one without skills: that is the other
 * tools' NOT_FOUND KNOWLEDGE_NETWORK_NOT_FOUND, naming the networks there are.
 */
export async function checkSkillsContract(
  backend: KnowledgeNetworkBackend,
  ctx: CallContext,
  knId: string,
): Promise<ObjectType> {
  let skills: ObjectType;
  try {
    skills = await objectTypeOf(backend, ctx, knId, SKILLS_TYPE_ID);
  } catch (err) {
    if (!(err instanceof ToolError) || err.reason !== "OBJECT_TYPE_NOT_FOUND") throw err;
    throw new ToolError({
      code: "not_found",
      reason: "SKILLS_TYPE_NOT_FOUND",
      message: text(
        `knowledge network ${knId} has no "${SKILLS_TYPE_ID}" object type, so it holds no skills to find (skills object type not found in current knowledge network)`,
        `知识网络 ${knId} 没有 "${SKILLS_TYPE_ID}" 对象类型，因此没有可查找的技能`,
      ),
      metadata: { kn_id: knId, skills_object_type_id: SKILLS_TYPE_ID, ...err.metadata },
      hint: {
        message: text(
          `This network offers no skills; calling again will not change that. Its administrator can add an object type "${SKILLS_TYPE_ID}" (data properties skill_id, name, description) bound to object types by relation types.`,
          `这个知识网络不提供技能；再次调用也不会改变。它的管理员可以添加对象类型 "${SKILLS_TYPE_ID}"（数据属性 skill_id、name、description），并用关系类型把它绑定到对象类型上。`,
        ),
      },
      cause: err,
    });
  }
  const names = new Set(skills.data_properties.map((p) => p.name));
  const missing = REQUIRED_PROPERTIES.filter((p) => !names.has(p));
  if (missing.length > 0) {
    throw new ToolError({
      code: "failed_precondition",
      reason: "SKILLS_CONTRACT_INCOMPLETE",
      message: text(
        `the "${SKILLS_TYPE_ID}" object type of knowledge network ${knId} lacks the data properties ${missing.join(", ")} that find_skills reads (skills object type contract is incomplete)`,
        `知识网络 ${knId} 的 "${SKILLS_TYPE_ID}" 对象类型缺少 find_skills 要读取的数据属性 ${missing.join(", ")}`,
      ),
      metadata: { kn_id: knId, skills_object_type_id: SKILLS_TYPE_ID, missing_data_properties: missing.join(",") },
      hint: {
        message: text(
          `The network's administrator must add ${missing.join(" and ")} to "${SKILLS_TYPE_ID}"; calling again will fail the same way.`,
          `需要这个知识网络的管理员给 "${SKILLS_TYPE_ID}" 添加 ${missing.join(" 和 ")}；再次调用会同样失败。`,
        ),
      },
    });
  }
  return skills;
}

/**
 * skill_query as a condition: on each searched property (name, description)
 * vector neighbours (knn, the top_k nearest) and full-text matches, as far as
 * the property allows them, or "contains" when it allows neither; all or-ed.
 */
export function skillQueryCondition(skills: ObjectType, query: string, topK: number): Condition {
  const leaves: Condition[] = [];
  for (const p of skills.data_properties.filter((d) => SEARCHED_PROPERTIES.includes(d.name))) {
    const ops = new Set(p.condition_operations);
    if (ops.has("knn"))
      leaves.push({
        field: p.name,
        operation: "knn",
        value: query,
        value_from: "const",
        limit_key: "k",
        limit_value: topK,
      });
    if (ops.has("match")) leaves.push({ field: p.name, operation: "match", value: query, value_from: "const" });
    if (!ops.has("knn") && !ops.has("match") && ops.has("like"))
      leaves.push({ field: p.name, operation: "like", value: query, value_from: "const" });
  }
  if (leaves.length === 0) {
    throw new ToolError({
      code: "failed_precondition",
      reason: "SKILL_QUERY_UNSUPPORTED",
      message: text(
        `the "${SKILLS_TYPE_ID}" object type allows no text search (knn, match or like) on ${SEARCHED_PROPERTIES.join(" or ")}, so skill_query cannot be applied`,
        `"${SKILLS_TYPE_ID}" 对象类型的 ${SEARCHED_PROPERTIES.join(" 或 ")} 不允许文本搜索（knn、match 或 like），因此无法使用 skill_query`,
      ),
      violations: [
        {
          field: "skill_query",
          description: text("this network's skills cannot be searched by text", "这个知识网络的技能不能按文本搜索"),
        },
      ],
      hint: {
        message: text(
          "Call again without skill_query: every available skill is then returned.",
          "不带 skill_query 再调用：这样会返回所有可用的技能。",
        ),
      },
    });
  }
  return { operation: "or", sub_conditions: leaves };
}

/**
 * The instances as a condition on their type: one and-group of `==` per
 * primary key for each identity, or-ed. Each identity must give every
 * primary key (INVALID_ARGUMENT naming the missing ones).
 */
export function instanceFilter(type: ObjectType, identities: InstanceIdentity[]): Condition | undefined {
  if (identities.length === 0) return undefined;
  const violations: FieldViolation[] = [];
  identities.forEach((identity, i) => {
    const missing = type.primary_keys.filter((k) => identity[k] === undefined || identity[k] === null);
    if (missing.length > 0)
      violations.push({
        field: `instance_identities[${i}]`,
        description: text(
          `missing primary key ${missing.join(", ")} of ${type.id} (its primary keys: ${type.primary_keys.join(", ")})`,
          `缺少 ${type.id} 的主键 ${missing.join(", ")}（它的主键：${type.primary_keys.join(", ")}）`,
        ),
      });
  });
  if (violations.length > 0) {
    throw invalidArgument(violations, {
      message: text(
        "Copy each instance's _instance_identity as it is from a query_object_instance answer (QueryObjectInstances): every primary key, nothing made up.",
        "从 query_object_instance（QueryObjectInstances）的应答中原样复制每个实例的 _instance_identity：包含每个主键，不可臆造。",
      ),
    });
  }
  return {
    operation: "or",
    sub_conditions: identities.map((identity) => ({
      operation: "and",
      sub_conditions: type.primary_keys.map((k) => ({
        field: k,
        operation: "==",
        value: identity[k]!,
        value_from: "const",
      })),
    })),
  };
}
