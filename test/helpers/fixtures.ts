/** The spec's example handoff (memrecall-tools §4.1), as snake_case JSON. */
export const handoffJson = {
  reason: "已找到相关记忆，搜索完成",
  search_summary: "找到用户之前的数据库配置",
  relevant_memory_keys: ["db_config_001"],
  confidence: 0.85,
};

/** The same request as a connect-es message init. */
export const handoffInit = {
  reason: handoffJson.reason,
  searchSummary: handoffJson.search_summary,
  relevantMemoryKeys: handoffJson.relevant_memory_keys,
  confidence: handoffJson.confidence,
};

/**
 * The report Handoff renders for it in English (what the test servers answer callers that ask for no
 * language), whatever the protocol or client; the data (the summary, the keys) stays as sent.
 */
export const expectedHandoffReport = [
  "## Memory search complete (confidence: 85%)",
  "",
  "### Search summary",
  "找到用户之前的数据库配置",
  "",
  "### Relevant memory keys",
  "1 relevant memory found:",
  "- db_config_001",
].join("\n");

/** The same in the spec's Chinese (memrecall-tools §4.1), for a caller that asks for zh (and by DEFAULT_LANGUAGE). */
export const expectedHandoffReportZh = [
  "## 记忆搜索完成 (信心度: 85%)",
  "",
  "### 搜索总结",
  "找到用户之前的数据库配置",
  "",
  "### 相关记忆标识",
  "共找到 1 个相关记忆:",
  "- db_config_001",
].join("\n");
