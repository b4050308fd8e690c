import { Jieba } from "@node-rs/jieba";
import { dict } from "@node-rs/jieba/dict";

/** One jieba instance per process: loading the dictionary takes ~100 ms. */
let jieba: Jieba | undefined;
export function tokenizer(): Jieba {
  jieba ??= Jieba.withDict(dict);
  return jieba;
}

/**
 * The form text is compared in: NFKC (full-width letters, digits and
 * punctuation become their half-width forms, so "ＩｇＡ（２型）" reads
 * "IgA(2型)"), lower case, runs of white space collapsed.
 */
export function normalizeText(text: string): string {
  return text.normalize("NFKC").toLowerCase().replace(/\s+/g, " ").trim();
}

/** Word tokens for full-text matching: jieba's search segmentation of the normalised text, punctuation dropped. */
export function tokenize(text: string): string[] {
  const normalized = normalizeText(text);
  if (normalized === "") return [];
  return tokenizer()
    .cutForSearch(normalized, true)
    .filter((t) => /[\p{L}\p{N}]/u.test(t));
}

/** The words of a text in jieba's precise mode (no overlapping sub-words), punctuation dropped. */
export function words(text: string): string[] {
  const normalized = normalizeText(text);
  if (normalized === "") return [];
  return tokenizer()
    .cut(normalized, false)
    .filter((t) => /[\p{L}\p{N}]/u.test(t));
}

/** The distinct character bigrams of a normalised string (its single character when it has one). */
export function bigrams(normalized: string): string[] {
  const chars = [...normalized];
  if (chars.length === 1) return chars;
  const out = new Set<string>();
  for (let i = 0; i + 1 < chars.length; i++) out.add(chars[i]! + chars[i + 1]!);
  return [...out];
}

/** The text of a property value for matching, or undefined for values that are not text-like. */
export function textOf(value: unknown): string | undefined {
  if (typeof value === "string") return value;
  if (typeof value === "number" || typeof value === "boolean") return String(value);
  return undefined;
}
