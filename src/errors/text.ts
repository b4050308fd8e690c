/**
 * Words for a caller, in each language the service answers in. Every error
 * message, hint and field violation is written in both, side by side where it
 * is raised, and the edge that renders the error picks the caller's language
 * (Accept-Language, a `language` header, else DEFAULT_LANGUAGE): one language
 * per answer, never a mix.
 */
import type { Language } from "../core/call-context";

export type { Language };

export const LANGUAGES: readonly Language[] = ["en", "zh"];

export interface Text {
  readonly en: string;
  readonly zh: string;
}

export function text(en: string, zh: string): Text {
  return { en, zh };
}

/** The same words in every language: an id, a number, a value the caller sent. */
export function verbatim(s: string): Text {
  return { en: s, zh: s };
}

/** Words joined per language (`sep` may differ per language: "; " and "；"). */
export function joinText(parts: readonly Text[], sep: Text): Text {
  return { en: parts.map((p) => p.en).join(sep.en), zh: parts.map((p) => p.zh).join(sep.zh) };
}

/** Builds a Text from one template run once per language: `inBoth((l) => l === "en" ? … : …)`. */
export function inBoth(render: (language: Language) => string): Text {
  return { en: render("en"), zh: render("zh") };
}

/**
 * Zod's messages are strings: a schema's own message in both languages travels
 * as the two joined by this separator (zodText), and validation splits it back
 * (src/errors/validation.ts). It is a control character no message contains.
 */
export const ZOD_TEXT_SEPARATOR = "\u001f";

/** A zod schema's message (`.min(1, zodText(…, …))`, `ctx.addIssue({ message: zodText(…) })`) in both languages. */
export function zodText(en: string, zh: string): string {
  return `${en}${ZOD_TEXT_SEPARATOR}${zh}`;
}

/** A zod issue's message as Text: both languages when zodText wrote it, else the one string in both. */
export function fromZodMessage(message: string): Text {
  const at = message.indexOf(ZOD_TEXT_SEPARATOR);
  return at < 0 ? verbatim(message) : { en: message.slice(0, at), zh: message.slice(at + 1) };
}
