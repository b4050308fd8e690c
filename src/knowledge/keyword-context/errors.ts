import { ToolError } from "../../errors/tool-error";

/**
 * Keyword context's refusals, in the spec's words (keyword-context-recall
 * §7.3, §7.4) where it gives them, each with the next step for the agent.
 */

const RETRIEVE_SCHEMA_RPC = "contextloader.knowledge.v1.KnowledgeRetrievalService/RetrieveSchema";

export function sessionIdRequired(): ToolError {
  return new ToolError({
    code: "invalid_argument",
    reason: "SESSION_ID_REQUIRED",
    message: "session_id参数必须提供，用于存储和检索schema信息",
    violations: [{ field: "session_id", description: "required: the session of the earlier schema recall" }],
    hint: { message: "Pass the session_id that RetrieveSchema returned." },
  });
}

export function keywordRequired(): ToolError {
  return new ToolError({
    code: "invalid_argument",
    reason: "INVALID_ARGUMENT",
    message: "query必须是一个关键词，例如：上气道梗阻",
    violations: [{ field: "query", description: "required: one keyword taken from the question" }],
  });
}

export function keywordWithoutText(): ToolError {
  return new ToolError({
    code: "invalid_argument",
    reason: "INVALID_ARGUMENT",
    message: "query必须是一个关键词：它只有标点或空白",
    violations: [{ field: "query", description: "has no letters or digits" }],
  });
}

export function schemaNotInSession(sessionId: string): ToolError {
  return new ToolError({
    code: "failed_precondition",
    reason: "SCHEMA_NOT_IN_SESSION",
    message: "Schema信息不存在，请先调用enable_keyword_context=False召回schema",
    detail: {
      message: "请先调用knowledge_network_retrieval工具，设置enable_keyword_context=False召回schema",
      session_id: sessionId,
    },
    hint: {
      message: "Call RetrieveSchema with the full question and this session_id first, then call again.",
      nextRpc: RETRIEVE_SCHEMA_RPC,
    },
  });
}

export function objectTypeRequired(sessionTypes: string[]): ToolError {
  return new ToolError({
    code: "invalid_argument",
    reason: "OBJECT_TYPE_ID_REQUIRED",
    message: "object_type_id参数必须提供，用于指定关键词所属的对象类型",
    detail: {
      message:
        "当enable_keyword_context=True时，object_type_id参数必须提供。因为即使用关键词，但是有很多对象类型，你不知道这个关键词属于哪个对象类型。",
      suggestion: "请提供object_type_id参数，例如：object_type_id='person'",
    },
    violations: [{ field: "object_type_id", description: "required: the object type the keyword belongs to" }],
    hint: { message: "请提供object_type_id参数，例如：object_type_id='person'", validValues: sessionTypes },
  });
}

export function networksNotInSession(foreign: string[], sessionNetworks: string[]): ToolError {
  return new ToolError({
    code: "invalid_argument",
    reason: "KN_NOT_IN_SESSION",
    message: `kn_ids ${foreign.join(", ")} 不在本会话召回的schema中；本会话的知识网络：${sessionNetworks.join(", ")}`,
    violations: [{ field: "kn_ids", description: "must be networks of the session's schema" }],
    hint: {
      message: "Leave kn_ids out, or name networks the session's RetrieveSchema used.",
      validValues: sessionNetworks,
    },
  });
}

export function objectTypeNotInSchema(objectTypeId: string, sessionTypes: string[]): ToolError {
  return new ToolError({
    code: "invalid_argument",
    reason: "OBJECT_TYPE_NOT_IN_SCHEMA",
    message: `object_type_id '${objectTypeId}' 不在本会话召回的schema中；可用的对象类型：${sessionTypes.join(", ")}`,
    violations: [{ field: "object_type_id", description: "not in the session's schema" }],
    hint: {
      message:
        "Use an object type of the session's schema, or recall the schema again with a question that covers this type.",
      validValues: sessionTypes,
      nextRpc: RETRIEVE_SCHEMA_RPC,
    },
  });
}

export function objectTypeAmbiguous(objectTypeId: string, networks: string[]): ToolError {
  return new ToolError({
    code: "invalid_argument",
    reason: "OBJECT_TYPE_AMBIGUOUS",
    message: `object_type_id '${objectTypeId}' 存在于多个知识网络（${networks.join(", ")}）中，请用kn_ids指定`,
    violations: [{ field: "kn_ids", description: "name the network" }],
    hint: { message: "Pass kn_ids with the one network to search.", validValues: networks },
  });
}

export function objectTypeNotSearchable(objectTypeId: string): ToolError {
  return new ToolError({
    code: "failed_precondition",
    reason: "OBJECT_TYPE_NOT_SEARCHABLE",
    message: `no property of object type ${objectTypeId} supports a text condition (==, like, match or knn), so a keyword cannot be looked up in it`,
    hint: { message: "Search another object type of the session's schema." },
  });
}
