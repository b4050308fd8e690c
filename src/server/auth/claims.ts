import type { AccountType, Caller } from "../../core/call-context";
import { type Text, text } from "../../errors/text";
import type { ClaimMapping } from "./settings";

/** Identity-provider spellings of the account types (the platform's visitor types among them). */
const ACCOUNT_TYPES: Record<string, AccountType> = {
  user: "user",
  realname: "user",
  app: "app",
  business: "app",
  anonymous: "anonymous",
};
const MAX_ACCOUNT_ID_LENGTH = 256;
/** The scopes this service acts on look like "memories:sensitive"; a token's other scopes (URLs, "openid") are not ours. */
const SCOPE = /^[a-z0-9][a-z0-9:._-]{0,63}$/;

/**
 * The caller a verified token names, through the claim mapping; words
 * saying what is missing when the claims name no usable account.
 */
export function callerFromClaims(claims: Record<string, unknown>, mapping: ClaimMapping): Caller | Text {
  const accountId = claim(claims, mapping.accountId);
  if (typeof accountId !== "string" || accountId.trim() === "") {
    return text(
      `it carries no "${mapping.accountId}" claim naming the account`,
      `它没有指明账号的 "${mapping.accountId}" 声明`,
    );
  }
  // biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what it refuses
  if (accountId.length > MAX_ACCOUNT_ID_LENGTH || /[\u0000-\u001f\u007f]/.test(accountId)) {
    return text(
      `its "${mapping.accountId}" claim is not an account id of at most ${MAX_ACCOUNT_ID_LENGTH} printable characters`,
      `它的 "${mapping.accountId}" 声明不是至多 ${MAX_ACCOUNT_ID_LENGTH} 个可打印字符的账号 id`,
    );
  }
  let accountType: AccountType = "user";
  if (mapping.accountType !== undefined) {
    const raw = claim(claims, mapping.accountType);
    if (raw !== undefined) {
      const known = typeof raw === "string" ? ACCOUNT_TYPES[raw.trim().toLowerCase()] : undefined;
      if (known === undefined) {
        return text(
          `its "${mapping.accountType}" claim is not an account type (user, app, anonymous, realname, business)`,
          `它的 "${mapping.accountType}" 声明不是账号类型（user、app、anonymous、realname、business）`,
        );
      }
      accountType = known;
    }
  }
  const rawScopes = claim(claims, mapping.scopes);
  const listed = typeof rawScopes === "string" ? rawScopes.split(/\s+/) : Array.isArray(rawScopes) ? rawScopes : [];
  const scopes = [...new Set(listed.filter((s): s is string => typeof s === "string" && SCOPE.test(s)))];
  return { accountId: accountId.trim(), accountType, ...(scopes.length > 0 ? { scopes } : {}) };
}

/** A claim by its name, or else by a dotted path into nested objects (ext.visitor_type). */
function claim(claims: Record<string, unknown>, name: string): unknown {
  if (Object.hasOwn(claims, name)) return claims[name];
  let value: unknown = claims;
  for (const part of name.split(".")) {
    if (typeof value !== "object" || value === null || !Object.hasOwn(value, part)) return undefined;
    value = (value as Record<string, unknown>)[part];
  }
  return value;
}
