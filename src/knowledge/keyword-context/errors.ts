import { text, verbatim } from "../../errors/text";
import { ToolError } from "../../errors/tool-error";

/**
 * Keyword context's refusals, in the spec's words (keyword-context-recall
 * §7.3, §7.4) where it gives them, each with the next step for the agent.
 * The spec's Chinese names the original tool's flag (`enable_keyword_context=False`);
 * ours says the same in this service's terms: recall the schema (RetrieveSchema) first.
 */

const RETRIEVE_SCHEMA_RPC = "contextloader.knowledge.v1.KnowledgeRetrievalService/RetrieveSchema";

export function sessionIdRequired(): ToolError {
  return new ToolError({
    code: "invalid_argument",
    reason: "SESSION_ID_REQUIRED",
    message: text(
      "session_id is required: it is where the recalled schema is stored and looked up",
      "session_id参数必须提供，用于存储和检索schema信息",
    ),
    violations: [
      {
        field: "session_id",
        description: text("required: the session of the earlier schema recall", "必填：之前召回schema时的会话"),
      },
    ],
    hint: {
      message: text("Pass the session_id that RetrieveSchema returned.", "传入RetrieveSchema返回的session_id。"),
    },
  });
}

export function keywordRequired(): ToolError {
  return new ToolError({
    code: "invalid_argument",
    reason: "INVALID_ARGUMENT",
    message: text('query must be one keyword, for example "上气道梗阻"', "query必须是一个关键词，例如：上气道梗阻"),
    violations: [
      {
        field: "query",
        description: text("required: one keyword taken from the question", "必填：从问题中取出的一个关键词"),
      },
    ],
  });
}

export function keywordWithoutText(): ToolError {
  return new ToolError({
    code: "invalid_argument",
    reason: "INVALID_ARGUMENT",
    message: text(
      "query must be one keyword: it holds only punctuation or white space",
      "query必须是一个关键词：它只有标点或空白",
    ),
    violations: [{ field: "query", description: text("has no letters or digits", "没有文字或数字") }],
  });
}

export function schemaNotInSession(sessionId: string): ToolError {
  return new ToolError({
    code: "failed_precondition",
    reason: "SCHEMA_NOT_IN_SESSION",
    message: text(
      "this session has no recalled schema: recall it with RetrieveSchema first",
      "Schema信息不存在，请先调用RetrieveSchema召回schema",
    ),
    detail: {
      message: text(
        "Call RetrieveSchema with the question and this session_id first to recall the schema.",
        "请先用问题和这个session_id调用RetrieveSchema召回schema",
      ),
      session_id: verbatim(sessionId),
    },
    hint: {
      message: text(
        "Call RetrieveSchema with the full question and this session_id first, then call again.",
        "先用完整的问题和这个session_id调用RetrieveSchema，再重新调用。",
      ),
      nextRpc: RETRIEVE_SCHEMA_RPC,
    },
  });
}

export function objectTypeRequired(sessionTypes: string[]): ToolError {
  return new ToolError({
    code: "invalid_argument",
    reason: "OBJECT_TYPE_ID_REQUIRED",
    message: text(
      "object_type_id is required: it names the object type the keyword belongs to",
      "object_type_id参数必须提供，用于指定关键词所属的对象类型",
    ),
    detail: {
      message: text(
        "Keyword context needs object_type_id: a network has many object types, and a keyword alone does not say which one it belongs to.",
        "召回关键词上下文时，object_type_id参数必须提供。因为即使有关键词，也有很多对象类型，无法知道这个关键词属于哪个对象类型。",
      ),
      suggestion: text(
        "Pass object_type_id, for example object_type_id='person'.",
        "请提供object_type_id参数，例如：object_type_id='person'",
      ),
    },
    violations: [
      {
        field: "object_type_id",
        description: text("required: the object type the keyword belongs to", "必填：关键词所属的对象类型"),
      },
    ],
    hint: {
      message: text(
        "Pass object_type_id, one of the session's object types, for example object_type_id='person'.",
        "请提供object_type_id参数（本会话的对象类型之一），例如：object_type_id='person'",
      ),
      validValues: sessionTypes,
    },
  });
}

export function networksNotInSession(foreign: string[], sessionNetworks: string[]): ToolError {
  return new ToolError({
    code: "invalid_argument",
    reason: "KN_NOT_IN_SESSION",
    message: text(
      `kn_ids ${foreign.join(", ")} are not in the schema this session recalled; the session's knowledge networks: ${sessionNetworks.join(", ")}`,
      `kn_ids ${foreign.join(", ")} 不在本会话召回的schema中；本会话的知识网络：${sessionNetworks.join(", ")}`,
    ),
    violations: [
      {
        field: "kn_ids",
        description: text("must be networks of the session's schema", "必须是本会话schema中的知识网络"),
      },
    ],
    hint: {
      message: text(
        "Leave kn_ids out, or name networks the session's RetrieveSchema used.",
        "不传kn_ids，或只传本会话RetrieveSchema用过的知识网络。",
      ),
      validValues: sessionNetworks,
    },
  });
}

export function objectTypeNotInSchema(objectTypeId: string, sessionTypes: string[]): ToolError {
  return new ToolError({
    code: "invalid_argument",
    reason: "OBJECT_TYPE_NOT_IN_SCHEMA",
    message: text(
      `object_type_id '${objectTypeId}' is not in the schema this session recalled; its object types: ${sessionTypes.join(", ")}`,
      `object_type_id '${objectTypeId}' 不在本会话召回的schema中；可用的对象类型：${sessionTypes.join(", ")}`,
    ),
    violations: [{ field: "object_type_id", description: text("not in the session's schema", "不在本会话的schema中") }],
    hint: {
      message: text(
        "Use an object type of the session's schema, or recall the schema again with a question that covers this type.",
        "使用本会话schema中的对象类型，或用涵盖这个类型的问题重新召回schema。",
      ),
      validValues: sessionTypes,
      nextRpc: RETRIEVE_SCHEMA_RPC,
    },
  });
}

export function objectTypeAmbiguous(objectTypeId: string, networks: string[]): ToolError {
  return new ToolError({
    code: "invalid_argument",
    reason: "OBJECT_TYPE_AMBIGUOUS",
    message: text(
      `object_type_id '${objectTypeId}' exists in several knowledge networks (${networks.join(", ")}); name one with kn_ids`,
      `object_type_id '${objectTypeId}' 存在于多个知识网络（${networks.join(", ")}）中，请用kn_ids指定`,
    ),
    violations: [{ field: "kn_ids", description: text("name the network", "指定知识网络") }],
    hint: {
      message: text("Pass kn_ids with the one network to search.", "用kn_ids传入要搜索的那一个知识网络。"),
      validValues: networks,
    },
  });
}

export function objectTypeNotSearchable(objectTypeId: string): ToolError {
  return new ToolError({
    code: "failed_precondition",
    reason: "OBJECT_TYPE_NOT_SEARCHABLE",
    message: text(
      `no property of object type ${objectTypeId} supports a text condition (==, like, match or knn), so a keyword cannot be looked up in it`,
      `对象类型 ${objectTypeId} 没有支持文本条件（==、like、match 或 knn）的属性，无法在其中查找关键词`,
    ),
    hint: {
      message: text("Search another object type of the session's schema.", "搜索本会话schema中的其他对象类型。"),
    },
  });
}
