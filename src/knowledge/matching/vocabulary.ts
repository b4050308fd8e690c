import { z } from "zod";
import { readJsonFile } from "../../core/json";
import { type Alternate, looseKey, type Mention, mentionOf } from "./mention";
import { editDistance } from "./similarity";

/**
 * What a deployment knows about how instances are named beyond a network's
 * own data, as data files (MENTION_VOCABULARY): generic equivalences of the
 * everyday and the formal way of writing a word (疼 → 痛), valid for every
 * network, and per network the other names people use for its instances
 * (lay names, English names and clinical abbreviations, brand names).
 */
export interface Vocabulary {
  /** The mention with its alternates for an object type of a network: what it may stand for. */
  expand(knId: string, objectTypeId: string, m: Mention): Mention;
  /** Files read, terms known: for the start-up log. */
  readonly summary: { files: number; equivalents: number; names: number };
}

/** A match through the vocabulary counts a little less than a match of what was typed. */
const DICTIONARY_WEIGHT = 0.93;
const EQUIVALENT_WEIGHT = 0.95;

const fileSchema = z.strictObject({
  knowledge_network_id: z.string().min(1, 'knowledge_network_id is required: a network id, or "*" for every network'),
  about: z.string().optional(),
  equivalents: z.array(z.tuple([z.string().min(1), z.string().min(1)]).rest(z.string())).default([]),
  entries: z
    .array(
      z.strictObject({
        object_type_id: z.string().min(1),
        name: z.string().min(1),
        also: z.array(z.string().min(1)).min(1),
      }),
    )
    .default([]),
});

/** A vocabulary file that cannot be used; start-up stops with this message. */
export class VocabularyError extends Error {
  override name = "VocabularyError";
}

/** Reads the vocabulary files (JSON, see docs/internals.md, "Mention matching"); a bad file throws a VocabularyError naming it. */
export function loadVocabulary(paths: readonly string[]): Vocabulary {
  const equivalents: [string, string][] = [];
  // network → object type → loose term → names
  const names = new Map<string, Map<string, Map<string, string[]>>>();
  let count = 0;
  for (const path of paths) {
    const read = readJsonFile(path, fileSchema);
    if (!read.ok) throw new VocabularyError(`mention vocabulary ${path} cannot be used: ${read.why}`);
    const parsed = read.value;
    for (const [from, to] of parsed.equivalents) equivalents.push([from.normalize("NFKC"), to.normalize("NFKC")]);
    const network = names.get(parsed.knowledge_network_id) ?? new Map<string, Map<string, string[]>>();
    names.set(parsed.knowledge_network_id, network);
    for (const e of parsed.entries) {
      const type = network.get(e.object_type_id) ?? new Map<string, string[]>();
      network.set(e.object_type_id, type);
      for (const term of e.also) {
        const key = looseKey(term);
        if (key === "") continue;
        type.set(key, [...new Set([...(type.get(key) ?? []), e.name])]);
        count++;
      }
    }
  }
  // Longer forms first, so that a rewrite never undoes part of a longer one.
  equivalents.sort((a, b) => b[0].length - a[0].length);
  const byFirst = byFirstUnit(equivalents);
  return {
    summary: { files: paths.length, equivalents: equivalents.length, names: count },
    expand(knId, objectTypeId, m) {
      const alternates: Alternate[] = [];
      const rewritten = rewrite(m.text.normalize("NFKC"), byFirst);
      const forms = [m];
      if (rewritten !== m.text.normalize("NFKC")) {
        const formal = mentionOf(rewritten);
        forms.push(formal);
        alternates.push({ mention: formal, via: "equivalent", weight: EQUIVALENT_WEIGHT });
      }
      for (const network of [names.get(knId), names.get("*")]) {
        const terms = network?.get(objectTypeId);
        if (!terms) continue;
        for (const form of forms) {
          for (const name of terms.get(form.loose) ?? nearLatin(terms, form)) {
            alternates.push({ mention: mentionOf(name), via: "dictionary", weight: DICTIONARY_WEIGHT });
          }
        }
      }
      return alternates.length === 0 ? m : { ...m, alternates };
    },
  };
}

/** An English term of six letters or more misspelt by one edit (amoxicilin, diarrea) still names its instance. */
function nearLatin(terms: ReadonlyMap<string, string[]>, m: Mention): string[] {
  if (!m.latin || m.chars.length < 6) return [];
  const out = new Set<string>();
  for (const [term, names] of terms) {
    if (Math.abs(term.length - m.loose.length) > 1 || !/^[a-z0-9]+$/.test(term)) continue;
    if (editDistance(m.chars, [...term], 1) <= 1) for (const n of names) out.add(n);
  }
  return [...out];
}

/**
 * The equivalences grouped by the first UTF-16 unit of their colloquial form,
 * each group in the order given (longest first): a position is tried against
 * the few that can start there, not all of them (a question of twelve
 * characters was 1 400 comparisons for each object type searched).
 */
function byFirstUnit(equivalents: readonly [string, string][]): ReadonlyMap<string, [string, string][]> {
  const groups = new Map<string, [string, string][]>();
  for (const e of equivalents) {
    const first = e[0][0]!;
    const group = groups.get(first);
    if (group) group.push(e);
    else groups.set(first, [e]);
  }
  return groups;
}

/** Every colloquial form in `text` replaced by its formal one, longest first, each position once. */
function rewrite(text: string, byFirst: ReadonlyMap<string, readonly [string, string][]>): string {
  if (byFirst.size === 0) return text;
  let out = "";
  let i = 0;
  outer: while (i < text.length) {
    for (const [from, to] of byFirst.get(text[i]!) ?? []) {
      if (text.startsWith(from, i)) {
        out += to;
        i += from.length;
        continue outer;
      }
    }
    out += text[i];
    i++;
  }
  return out;
}

/** A vocabulary that knows nothing beyond the network (no files). */
export const emptyVocabulary: Vocabulary = loadVocabulary([]);
