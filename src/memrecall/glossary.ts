import { z } from "zod";
import { readJsonFile } from "../core/json";
import { normalizeText, tokenizer } from "../core/text";

/**
 * MemRecall's glossary: groups of terms that mean the same (数据库 ↔ database
 * ↔ DB, 封版 ↔ code freeze, 日活 ↔ DAU), read from data files
 * (MEMRECALL_GLOSSARY) so a deployment can add its own. It is applied twice:
 * a memory is indexed under the groups its text names (`markers`), and a
 * query looks for the equivalents of the terms it names (`occurrences`), which
 * count less than the words typed. Terms match on word boundaries only, the
 * longest first, so 消息队列 names the message queue and not a column (列),
 * and 企业版 the enterprise edition and not a company.
 */
export interface Glossary {
  /** The terms of `text` that the glossary knows, on word boundaries, longest first, each character in one. */
  occurrences(text: string): Occurrence[];
  /** The marker tokens of the groups `text` names: what a memory is indexed under. */
  markers(text: string): string[];
  /** Files read, groups and terms known: for the start-up log. */
  readonly summary: { files: number; groups: number; terms: number };
}

/** A glossary term found in a text. */
export interface Occurrence {
  /** The term as the glossary has it, normalised (NFKC, lower case). */
  term: string;
  /** The groups it belongs to (usually one). */
  groups: GlossaryGroup[];
}

export interface GlossaryGroup {
  /** The token a memory naming the group is indexed under (see `markerOf`). */
  marker: string;
  /** Every term of the group, normalised, the group's name first. */
  terms: string[];
}

/** A glossary file that cannot be used; start-up stops with this message. */
export class GlossaryError extends Error {
  override name = "GlossaryError";
}

const term = z
  .string()
  .transform((t) => normalizeText(t))
  .refine((t) => t !== "", "a term must not be empty")
  .refine(
    (t) => !/^\p{Script=Han}$/u.test(t),
    "a Chinese term needs at least two characters (one character is part of too many words)",
  );

const fileSchema = z.strictObject({
  about: z.string().optional(),
  groups: z.array(z.array(term).min(2, "a group needs at least two terms")).min(1, "groups must not be empty"),
});

/**
 * Reads the glossary files (JSON: `{"about": "...", "groups": [["数据库",
 * "database", "db"], ...]}`). Groups with the same first term, in one file or
 * several, are one group. A bad file throws a GlossaryError naming it.
 */
export function loadGlossary(paths: readonly string[]): Glossary {
  const byName = new Map<string, Set<string>>();
  for (const path of paths) {
    const read = readJsonFile(path, fileSchema);
    if (!read.ok) throw new GlossaryError(`memory glossary ${path} cannot be used: ${read.why}`);
    const parsed = read.value;
    for (const [name, ...rest] of parsed.groups) {
      const terms = byName.get(name!) ?? new Set([name!]);
      for (const t of rest) terms.add(t);
      byName.set(name!, terms);
    }
  }
  const glossary = glossaryOf(
    [...byName.entries()].map(([name, terms]) => ({ marker: markerOf(name), terms: [...terms] })),
  );
  return { ...glossary, summary: { ...glossary.summary, files: paths.length } };
}

/** A glossary of the given groups (the first term of each names it). */
function glossaryOf(groups: readonly GlossaryGroup[]): Glossary {
  // term → its groups; and the terms by their first character, longest first, for the scan.
  const groupsOf = new Map<string, GlossaryGroup[]>();
  for (const g of groups) for (const t of g.terms) groupsOf.set(t, [...(groupsOf.get(t) ?? []), g]);
  const byFirst = new Map<string, string[]>();
  for (const t of groupsOf.keys()) byFirst.set(t[0]!, [...(byFirst.get(t[0]!) ?? []), t]);
  for (const list of byFirst.values()) list.sort((a, b) => b.length - a.length);

  function occurrences(text: string): Occurrence[] {
    const normalized = normalizeText(text);
    const bounds = boundaries(normalized);
    const out: Occurrence[] = [];
    let i = 0;
    while (i < normalized.length) {
      const found = bounds.has(i)
        ? byFirst.get(normalized[i]!)?.find((t) => normalized.startsWith(t, i) && bounds.has(i + t.length))
        : undefined;
      if (found === undefined) {
        i++;
        continue;
      }
      out.push({ term: found, groups: groupsOf.get(found)! });
      i += found.length;
    }
    return out;
  }

  return {
    summary: { files: 0, groups: groups.length, terms: groupsOf.size },
    occurrences,
    markers(text) {
      return [...new Set(occurrences(text).flatMap((o) => o.groups.map((g) => g.marker)))];
    },
  };
}

/**
 * The positions (UTF-16 offsets) where jieba's words of a normalised text
 * begin and end: a term matches only from one to another. Latin words, digits
 * and punctuation are words of their own, so Latin terms match whole words.
 */
function boundaries(normalized: string): Set<number> {
  const out = new Set<number>([0]);
  let at = 0;
  for (const word of tokenizer().cut(normalized, false)) {
    at += word.length;
    out.add(at);
  }
  return out;
}

/**
 * The marker token of a group: "gls" and the base-36 FNV-1a hash of its name.
 * Letters and digits only, so both stores' full-text tokenisers keep it one
 * token; no text a person writes holds it by chance.
 */
export function markerOf(name: string): string {
  return `gls${fnv1a(name).toString(36)}`;
}

/** 32-bit FNV-1a of a string's UTF-16 code units: group markers, and the features of MemRecall's local embedder. */
export function fnv1a(text: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) {
    h ^= text.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  return h >>> 0;
}
