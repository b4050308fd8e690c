import { describe, expect, it } from "vitest";
import { safeParseBoth, violationsOf } from "../../src/errors/validation";
import { expandContextWindow } from "../../src/memrecall/expand-context-window";
import { handoff, percent } from "../../src/memrecall/handoff";
import { expandContextWindowInput, handoffInput } from "../../src/memrecall/inputs";
import { testContext } from "../helpers/call-context";

const expandInput = expandContextWindowInput(200);

describe("expand_context_window", () => {
  it("approves a larger window and moves to the next iteration, saying so in the caller's language", () => {
    const input = expandInput.parse({ reason: "搜索结果太少", current_size: 5, requested_size: 10 });
    expect(expandContextWindow(input, "zh")).toEqual({
      approved: true,
      new_size: 10,
      iteration: 2,
      max_iterations: 3,
      message: "批准拓展到 10 条消息，进入第 2 轮迭代",
    });
    expect(expandContextWindow(input, "en").message).toBe("expansion to 10 messages approved: iteration 2 begins");
  });

  it("refuses once the last iteration is reached and keeps the current size", () => {
    const input = expandInput.parse({
      reason: "r",
      current_size: 10,
      requested_size: 20,
      current_iteration: 3,
      max_iterations: 3,
    });
    expect(expandContextWindow(input, "zh")).toEqual({
      approved: false,
      new_size: 10,
      iteration: 3,
      max_iterations: 3,
      message: "已达到最大迭代次数 (3)，无法继续拓展",
    });
    expect(expandContextWindow(input, "en").message).toBe(
      "the maximum number of iterations (3) is reached: the window cannot grow",
    );
  });

  it.each([
    [{ reason: " ", current_size: 1, requested_size: 2 }, "reason"],
    [{ reason: "r", current_size: 5, requested_size: 5 }, "requested_size"],
    [{ reason: "r", current_size: 5, requested_size: 201 }, "requested_size"],
    [{ reason: "r", current_size: -1, requested_size: 2 }, "current_size"],
    [{ reason: "r", current_size: 1, requested_size: 2, current_iteration: 0 }, "current_iteration"],
    [{ reason: "r", current_size: 1, requested_size: 2, max_iterations: 11 }, "max_iterations"],
  ])("rejects %o on %s", (value, field) => {
    const result = expandInput.safeParse(value);
    expect(result.success).toBe(false);
    expect(result.error?.issues.map((i) => i.path.join("."))).toContain(field);
  });
});

describe("handoff", () => {
  const zh = () => testContext({ language: "zh" });

  it("renders the spec's report with every section that has content", () => {
    const input = handoffInput.parse({
      reason: "已找到相关记忆，搜索完成",
      search_summary: "找到用户之前的数据库配置",
      relevant_memory_keys: ["db_config_001", "db_config_002"],
      confidence: 0.85,
      reasoning: "两条记忆都提到 PostgreSQL",
      needs_more_info: true,
      follow_up_question: "是生产库还是测试库？",
    });
    expect(handoff(testContext({ language: "en" }), input).message).toBe(
      [
        "## Memory search complete (confidence: 85%)",
        "",
        "### Search summary",
        "找到用户之前的数据库配置",
        "",
        "### Relevance analysis",
        "两条记忆都提到 PostgreSQL",
        "",
        "### Relevant memory keys",
        "2 relevant memories found:",
        "- db_config_001",
        "- db_config_002",
        "",
        "### Needs clarification",
        "是生产库还是测试库？",
      ].join("\n"),
    );
    expect(handoff(zh(), input).message).toBe(
      [
        "## 记忆搜索完成 (信心度: 85%)",
        "",
        "### 搜索总结",
        "找到用户之前的数据库配置",
        "",
        "### 相关性分析",
        "两条记忆都提到 PostgreSQL",
        "",
        "### 相关记忆标识",
        "共找到 2 个相关记忆:",
        "- db_config_001",
        "- db_config_002",
        "",
        "### 需要进一步澄清",
        "是生产库还是测试库？",
      ].join("\n"),
    );
  });

  it("leaves out the sections that have nothing to say", () => {
    const input = handoffInput.parse({ reason: "r", search_summary: "未找到用户提到的历史记忆", confidence: 0 });
    expect(handoff(zh(), input)).toEqual({
      success: true,
      task_completed: true,
      message: "## 记忆搜索完成 (信心度: 0%)\n\n### 搜索总结\n未找到用户提到的历史记忆",
    });
  });

  it.each([
    [{ reason: "r", search_summary: "s" }, "confidence", "required (0.0..1.0)"],
    [{ reason: "r", search_summary: "s", confidence: 1.5 }, "confidence", "must be between 0.0 and 1.0"],
    [{ reason: "", search_summary: "s", confidence: 1 }, "reason", "required: say why the task ends"],
    [
      { reason: "r", search_summary: "s", confidence: 1, needs_more_info: true },
      "follow_up_question",
      expect.stringContaining("required when needs_more_info"),
    ],
    [
      { reason: "r", search_summary: "s", confidence: 1, relevant_memory_keys: [""] },
      "relevant_memory_keys[0]",
      "a memory key must not be empty",
    ],
  ])("rejects %o on %s", (value, field, message) => {
    const result = safeParseBoth(handoffInput, value);
    expect(result.success).toBe(false);
    const violations = result.success ? [] : violationsOf(result.error);
    expect(violations.map((v) => ({ field: v.field, message: v.description.en }))).toContainEqual({ field, message });
    // Every one in Chinese too, and none repeating its field's name.
    for (const v of violations) {
      expect(v.description.zh).toMatch(/\p{Script=Han}/u);
      expect(v.description.en.startsWith(v.field)).toBe(false);
    }
  });

  it.each([
    [0.85, "85%"],
    [0.125, "12%"],
    [0.135, "14%"],
    [1, "100%"],
    [0, "0%"],
    [0.999, "100%"],
  ])("formats confidence %d as Python's {:.0%%} does: %s", (value, text) => {
    expect(percent(value)).toBe(text);
  });
});
