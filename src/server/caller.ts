import type { AccountType, Caller } from "../core/call-context";
import { ToolError } from "../errors/tool-error";

const accountTypes: readonly AccountType[] = ["user", "app", "anonymous"];
const MAX_ACCOUNT_ID_LENGTH = 256;

/**
 * Reads the caller's identity from the `x-account-id` and `x-account-type`
 * headers (never from the body). The type defaults to "user"; an unknown type
 * or an unusable id is INVALID_ARGUMENT rather than a silent guess.
 */
export function callerFromHeaders(headers: Headers): Caller {
  const accountId = (headers.get("x-account-id") ?? "").trim();
  const rawType = (headers.get("x-account-type") ?? "").trim().toLowerCase();
  const violations = [];
  // biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what it refuses
  if (accountId.length > MAX_ACCOUNT_ID_LENGTH || /[\u0000-\u001f\u007f]/.test(accountId)) {
    violations.push({
      field: "x-account-id",
      description: `must be at most ${MAX_ACCOUNT_ID_LENGTH} printable characters`,
    });
  }
  if (rawType !== "" && !accountTypes.includes(rawType as AccountType)) {
    violations.push({ field: "x-account-type", description: 'must be one of "user", "app", "anonymous"' });
  }
  if (violations.length > 0) {
    throw new ToolError({
      code: "invalid_argument",
      reason: "INVALID_IDENTITY_HEADERS",
      message: `invalid identity headers: ${violations.map((v) => `${v.field} ${v.description}`).join("; ")}`,
      violations,
      hint: { message: "Send x-account-id with the caller's account id and x-account-type user, app or anonymous." },
    });
  }
  return { accountId, accountType: rawType === "" ? "user" : (rawType as AccountType) };
}
