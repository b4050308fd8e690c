import type { AccountType, Caller } from "../core/call-context";
import { inBoth, text } from "../errors/text";
import { type FieldViolation, ToolError } from "../errors/tool-error";
import { pathIdProblem } from "../upstream/path-ids";

const accountTypes: readonly AccountType[] = ["user", "app", "anonymous"];
const MAX_ACCOUNT_ID_LENGTH = 256;
const MAX_SCOPES = 32;
/** A scope is a short lower-case name like "memories:sensitive". */
const SCOPE = /^[a-z0-9][a-z0-9:._-]{0,63}$/;
const NO_SCOPES: readonly string[] = [];

/**
 * The knowledge network of the `x-kn-id` header (trimmed), or undefined when
 * the caller sent none; a value that breaks the id rule (src/upstream/path-ids.ts)
 * is INVALID_ARGUMENT naming the header.
 */
export function knIdFromHeaders(headers: Headers): string | undefined {
  const knId = (headers.get("x-kn-id") ?? "").trim();
  if (knId === "") return undefined;
  const problem = pathIdProblem(knId);
  if (problem !== undefined) {
    throw new ToolError({
      code: "invalid_argument",
      reason: "INVALID_KN_HEADER",
      message: text(`invalid x-kn-id header: ${problem.en}`, `x-kn-id 请求头无效：${problem.zh}`),
      violations: [{ field: "x-kn-id", description: problem }],
      hint: {
        message: text(
          "Send x-kn-id with a knowledge network id such as kn_medical, or pass kn_id in the call.",
          "在 x-kn-id 中发送知识网络 id（如 kn_medical），或在调用中传入 kn_id。",
        ),
      },
    });
  }
  return knId;
}

/**
 * Reads the caller's identity from the `x-account-id` and `x-account-type`
 * headers (never from the body), and the permissions the gateway granted from
 * `x-account-scopes` (comma- or space-separated). The type defaults to "user";
 * an unknown type, an unusable id or a malformed scope is INVALID_ARGUMENT
 * rather than a silent guess. Whether the headers are to be believed is the
 * authentication mode's decision (src/server/auth), not this function's.
 */
export function callerFromHeaders(headers: Pick<Headers, "get">): Caller {
  const accountId = (headers.get("x-account-id") ?? "").trim();
  const rawType = (headers.get("x-account-type") ?? "").trim().toLowerCase();
  const scopesHeader = headers.get("x-account-scopes");
  const scopes =
    scopesHeader === null || scopesHeader === ""
      ? NO_SCOPES
      : [...new Set(scopesHeader.split(/[\s,]+/).filter((s) => s !== ""))];
  const violations: FieldViolation[] = [];
  // biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what it refuses
  if (accountId.length > MAX_ACCOUNT_ID_LENGTH || /[\u0000-\u001f\u007f]/.test(accountId)) {
    violations.push({
      field: "x-account-id",
      description: text(
        `must be at most ${MAX_ACCOUNT_ID_LENGTH} printable characters`,
        `至多 ${MAX_ACCOUNT_ID_LENGTH} 个可打印字符`,
      ),
    });
  }
  if (rawType !== "" && !accountTypes.includes(rawType as AccountType)) {
    violations.push({
      field: "x-account-type",
      description: text('must be one of "user", "app", "anonymous"', '必须是 "user"、"app"、"anonymous" 之一'),
    });
  }
  const badScope = scopes.find((s) => !SCOPE.test(s));
  if (badScope !== undefined || scopes.length > MAX_SCOPES) {
    violations.push({
      field: "x-account-scopes",
      description: inBoth((l) => {
        const got = badScope === undefined ? "" : JSON.stringify(badScope.slice(0, 80));
        return l === "en"
          ? `must be at most ${MAX_SCOPES} comma-separated scopes like memories:sensitive (lower-case letters, digits, ":._-", at most 64 characters each)${got && `; got ${got}`}`
          : `至多 ${MAX_SCOPES} 个以逗号分隔的权限范围，形如 memories:sensitive（小写字母、数字、":._-"，每个至多 64 个字符）${got && `；收到的是 ${got}`}`;
      }),
    });
  }
  if (violations.length > 0) {
    throw new ToolError({
      code: "invalid_argument",
      reason: "INVALID_IDENTITY_HEADERS",
      message: text(
        `invalid identity headers: ${violations.map((v) => `${v.field}: ${v.description.en}`).join("; ")}`,
        `身份请求头无效：${violations.map((v) => `${v.field}：${v.description.zh}`).join("；")}`,
      ),
      violations,
      hint: {
        message: text(
          "Send x-account-id with the caller's account id and x-account-type user, app or anonymous.",
          "在 x-account-id 中发送调用方的账号 id，在 x-account-type 中发送 user、app 或 anonymous。",
        ),
      },
    });
  }
  return {
    accountId,
    accountType: rawType === "" ? "user" : (rawType as AccountType),
    ...(scopes.length > 0 ? { scopes } : {}),
  };
}
