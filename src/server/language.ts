import type { IncomingHttpHeaders } from "node:http";
import { type Language, text } from "../errors/text";
import { ToolError } from "../errors/tool-error";

/** Entries of an Accept-Language header looked at, at most: a header of thousands costs no more than this. */
const MAX_RANGES = 32;

/** The language a tag names ("zh-CN", "zh-Hant-TW", "en-GB", "EN"), or undefined for one the service does not answer in. */
function languageOfTag(tag: string): Language | undefined {
  const primary = tag.trim().split("-", 1)[0]?.toLowerCase();
  return primary === "en" || primary === "zh" ? primary : undefined;
}

/**
 * The `language` header's value: its first, when a client set it twice (on the channel and on the
 * call, which gRPC sends as one value joined by commas: "en, en").
 */
function firstValue(languageHeader: string): string {
  const comma = languageHeader.indexOf(",");
  return (comma < 0 ? languageHeader : languageHeader.slice(0, comma)).trim();
}

/**
 * The caller's language: the `language` request header (metadata, for gRPC callers whose stubs set no
 * Accept-Language) when set, else the most preferred of English and Chinese in Accept-Language
 * (RFC 9110 §12.5.4: q-values, `*` for any, q=0 for "not this"), else `fallback` (DEFAULT_LANGUAGE).
 * A `language` header it cannot honour is refused where the call starts (languageHeaderProblem), so
 * here it falls back.
 */
export function chooseLanguage(
  languageHeader: string | null | undefined,
  acceptLanguage: string | null | undefined,
  fallback: Language,
): Language {
  if (languageHeader) {
    const chosen = languageOfTag(firstValue(languageHeader));
    if (chosen !== undefined) return chosen;
  }
  if (!acceptLanguage) return fallback;
  let best: Language | undefined;
  let bestQ = 0;
  for (const range of acceptLanguage.split(",", MAX_RANGES)) {
    const [tag = "", ...params] = range.split(";");
    const qParam = params.map((p) => p.trim()).find((p) => p.startsWith("q="));
    const q = qParam === undefined ? 1 : Number(qParam.slice(2));
    if (!(q > bestQ) || q > 1) continue;
    const language = tag.trim() === "*" ? fallback : languageOfTag(tag);
    if (language === undefined) continue;
    best = language;
    bestQ = q;
  }
  return best ?? fallback;
}

/** INVALID_ARGUMENT for a `language` header that names no language the service answers in; undefined when it is fine or absent. */
export function languageHeaderProblem(languageHeader: string | null | undefined): ToolError | undefined {
  if (!languageHeader || languageOfTag(firstValue(languageHeader)) !== undefined) return undefined;
  return new ToolError({
    code: "invalid_argument",
    reason: "UNSUPPORTED_LANGUAGE",
    message: text(
      `the language header asks for "${languageHeader.slice(0, 32)}"; this service answers in en or zh`,
      `language 请求头要求的语言"${languageHeader.slice(0, 32)}"不受支持；本服务只用 en 或 zh 作答`,
    ),
    violations: [
      {
        field: "language",
        description: text("must be en or zh (or a tag such as zh-CN)", "必须是 en 或 zh（或 zh-CN 这样的标签）"),
      },
    ],
    hint: {
      message: text(
        "Send language: en or language: zh, or leave it out to use Accept-Language.",
        "发送 language: en 或 language: zh，或不发送它而使用 Accept-Language。",
      ),
      validValues: ["en", "zh"],
    },
  });
}

/** chooseLanguage for a Node request's headers (the JSON routes, MCP, the listener's own answers). */
export function requestLanguage(headers: IncomingHttpHeaders, fallback: Language): Language {
  const languageHeader = headers["language"];
  return chooseLanguage(
    typeof languageHeader === "string" ? languageHeader : undefined,
    headers["accept-language"],
    fallback,
  );
}
