import type { ObjectType } from "../../../kn/types";
import type { SkillScope } from "./types";

/** What led to an empty answer. */
export interface EmptyCase {
  scope: SkillScope;
  knId: string;
  /** The object type looked from (absent in network scope). */
  objectType: ObjectType | undefined;
  skillQuery: string;
  /** instance_identities were given. */
  instancesGiven: boolean;
  /** No relation type links the object type and skills. */
  noBinding: boolean;
  /** There are skills in scope, but none matches skill_query. */
  queryFilteredAll: boolean;
}

/**
 * Why find_skills found nothing and what to do next, in the words of the
 * platform tool's cases (network_no_skills, object_type_no_binding,
 * object_type_no_match, instance_no_match, skill_query_no_match), for a
 * Chinese-speaking agent.
 */
export function emptyMessage(c: EmptyCase): string {
  const type = c.objectType ? `${c.objectType.name || c.objectType.id}（${c.objectType.id}）` : "";
  if (c.noBinding) {
    return `对象类型 ${type} 与技能（skills）之间没有任何关系类型，技能没有绑定到这类对象上。可以把 object_type_id 设为 skills 在全部技能中查找，或请知识网络管理员为该对象类型绑定技能。`;
  }
  if (c.queryFilteredAll) {
    return `范围内有可用技能，但没有与「${c.skillQuery}」相关的。请换用技能名称或用途中的词重试，或去掉 skill_query 查看全部可用技能。`;
  }
  switch (c.scope) {
    case "network":
      return c.instancesGiven
        ? "给定的技能实例不存在。请去掉 instance_identities 在全部技能中查找。"
        : `知识网络 ${c.knId} 的技能类型（skills）中还没有任何技能，暂无可用技能；重试不会改变结果。`;
    case "instance":
      return `给定的实例没有绑定任何技能（也可能实例不存在）。可以去掉 instance_identities，查找对象类型 ${type} 的全部可用技能；或用 query_object_instance 确认实例的 _instance_identity。`;
    case "object_type":
      return `对象类型 ${type} 的实例都没有绑定技能。可以把 object_type_id 设为 skills 在全部技能中查找。`;
  }
}
