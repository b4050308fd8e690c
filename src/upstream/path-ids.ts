import type { z } from "zod";
import { type Text, text, zodText } from "../errors/text";
import { ToolError } from "../errors/tool-error";

/**
 * The one rule for every id a caller gives that becomes a segment of an
 * upstream URL (knowledge network, object / relation / action type, skill
 * type): ASCII letters, digits, "_" and "-", with "." allowed after the first
 * character, at most PATH_ID_MAX_LENGTH characters. The platform's own rule is
 * narrower (lower-case letters, digits, "_" and "-"); this one accepts every
 * id it makes and refuses what could leave its segment: "." and "..", "/",
 * "\", "%" (so no %2F), "?", "#", white space and control characters.
 */
const PATH_ID_MAX_LENGTH = 256;
const PATH_ID = /^[A-Za-z0-9_-][A-Za-z0-9_.-]*$/;

/** What the rule allows, in the words a violation uses. */
const PATH_ID_RULE = text(
  `ASCII letters, digits, "_", "-" and "." (not first), at most ${PATH_ID_MAX_LENGTH} characters`,
  `ASCII 字母、数字、"_"、"-" 和 "."（不可在首位），至多 ${PATH_ID_MAX_LENGTH} 个字符`,
);

/** Why `id` cannot be a path id, or undefined when it can. */
export function pathIdProblem(id: string): Text | undefined {
  if (id === "") return text("must not be empty", "不能为空");
  if (id.length > PATH_ID_MAX_LENGTH)
    return text(`must be at most ${PATH_ID_MAX_LENGTH} characters`, `至多 ${PATH_ID_MAX_LENGTH} 个字符`);
  if (!PATH_ID.test(id)) return text(`must be an id of ${PATH_ID_RULE.en}`, `必须是 id：${PATH_ID_RULE.zh}`);
  return undefined;
}

/**
 * `schema` with the rule added: for a request field holding such an id,
 * checked where the caller's input is read so the violation names the
 * caller's field. "" passes: the schema decides whether the field is required
 * (a `min(1)` before) or may be left out (a default after).
 */
export function pathId<S extends z.ZodString>(schema: S): S {
  return schema.superRefine((value, ctx) => {
    const problem = value === "" ? undefined : pathIdProblem(value);
    if (problem !== undefined) ctx.addIssue({ code: "custom", message: zodText(problem.en, problem.zh) });
  }) as S;
}

/** INVALID_ARGUMENT INVALID_ID naming `field` (the request field, or the header) when `id` breaks the rule. */
export function checkPathId(id: string, field: string): string {
  const problem = pathIdProblem(id);
  if (problem === undefined) return id;
  throw new ToolError({
    code: "invalid_argument",
    reason: "INVALID_ID",
    message: text(`invalid ${field}: ${problem.en}`, `${field} 无效：${problem.zh}`),
    violations: [{ field, description: problem }],
    hint: {
      message: text(
        `Use the id exactly as SearchSchema or the knowledge network returned it (${PATH_ID_RULE.en}).`,
        `使用 SearchSchema 或知识网络返回的原样 id（${PATH_ID_RULE.zh}）。`,
      ),
    },
  });
}

/**
 * Encodes one segment of an upstream URL path. Every client builds its paths
 * with this, so no value, whatever checked it before, can leave its segment:
 * "/", "?", "#" and "%" are percent-encoded, and a segment that would still be
 * empty, "." or ".." (which URL parsers collapse into the parent path) is
 * refused as our bug, since callers' ids are checked at the boundary.
 */
export function segment(value: string): string {
  const encoded = encodeURIComponent(value);
  if (encoded === "" || encoded === "." || encoded === "..") {
    throw new ToolError({
      code: "internal",
      reason: "UNSAFE_PATH_SEGMENT",
      message: text(
        "internal error: report the trace_id to the service operators",
        "内部错误：请把 trace_id 报告给服务的运维人员",
      ),
      privateDetail: `refused path segment ${JSON.stringify(value)}`,
    });
  }
  return encoded;
}
