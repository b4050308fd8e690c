import { type Text, text } from "../../../errors/text";
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
 * object_type_no_match, instance_no_match, skill_query_no_match), in both
 * languages: the answer carries the caller's.
 */
export function emptyMessage(c: EmptyCase): Text {
  const id = c.objectType?.id ?? "";
  const name = c.objectType ? c.objectType.name || id : "";
  const type = text(c.objectType ? `${name} (${id})` : "", c.objectType ? `${name}（${id}）` : "");
  if (c.noBinding) {
    return text(
      `No relation type links object type ${type.en} and the skills type (skills), so no skill is bound to objects of this type. Set object_type_id to skills to search every skill, or ask the knowledge network's administrator to bind skills to this object type.`,
      `对象类型 ${type.zh} 与技能（skills）之间没有任何关系类型，技能没有绑定到这类对象上。可以把 object_type_id 设为 skills 在全部技能中查找，或请知识网络管理员为该对象类型绑定技能。`,
    );
  }
  if (c.queryFilteredAll) {
    return text(
      `There are skills in scope, but none related to "${c.skillQuery}". Try again with words from a skill's name or purpose, or leave skill_query out to see every available skill.`,
      `范围内有可用技能，但没有与「${c.skillQuery}」相关的。请换用技能名称或用途中的词重试，或去掉 skill_query 查看全部可用技能。`,
    );
  }
  switch (c.scope) {
    case "network":
      return c.instancesGiven
        ? text(
            "The given skill instances do not exist. Leave instance_identities out to search every skill.",
            "给定的技能实例不存在。请去掉 instance_identities 在全部技能中查找。",
          )
        : text(
            `The skills type (skills) of knowledge network ${c.knId} holds no skill yet, so none is available; retrying will not change that.`,
            `知识网络 ${c.knId} 的技能类型（skills）中还没有任何技能，暂无可用技能；重试不会改变结果。`,
          );
    case "instance":
      return text(
        `No skill is bound to the given instances (or the instances do not exist). Leave instance_identities out to find every skill available to object type ${type.en}, or confirm the instances' _instance_identity with query_object_instance.`,
        `给定的实例没有绑定任何技能（也可能实例不存在）。可以去掉 instance_identities，查找对象类型 ${type.zh} 的全部可用技能；或用 query_object_instance 确认实例的 _instance_identity。`,
      );
    case "object_type":
      return text(
        `No instance of object type ${type.en} has a skill bound. Set object_type_id to skills to search every skill.`,
        `对象类型 ${type.zh} 的实例都没有绑定技能。可以把 object_type_id 设为 skills 在全部技能中查找。`,
      );
  }
}
