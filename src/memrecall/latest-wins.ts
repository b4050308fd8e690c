import { round3 } from "../core/scores";
import { normalizeText, STOP_WORDS } from "../core/text";
import type { MemoryRecord } from "../store/memories/memory-store";
import type { Glossary } from "./glossary";
import { idfOf, searchTokens } from "./search-text";

/** A memory a search found, with its relevance. */
export interface Found {
  record: MemoryRecord;
  relevance: number;
}

/** A found memory as the answer shows it: what it replaces, and what replaces it. */
export interface Shown extends Found {
  /** Older memories it replaces: the one it was stored to supersede, and those this search found it revises. */
  supersedes: string[];
  /** The newest memory that replaces it, "" when none. */
  superseded_by: string;
}

/** A replaced memory counts half: still found, below what replaced it, and under the default threshold unless it was a strong match. */
const SUPERSEDED_FACTOR = 0.5;
/** Two memories share a subject when this share of the smaller one's word weight is in both. */
const SAME_SUBJECT = 0.5;
/** Characters of a memory's content that say what it is about (with its summary). */
const SUBJECT_CHARS = 200;

/**
 * Words with which a note says it changes an earlier one: "以后都画折线图",
 * "改成中文", "from now on", "instead". Only a memory that says so replaces an
 * older one without being told (`supersedes`).
 */
const REVISION =
  /改成|改为|改用|改发|改回|改了|更正|纠正|以后|今后|从现在起|从今天起|不再|别再|不要了|换成|作废|取代|\b(?:instead|from now on|no longer|any ?more|changed|change to|switch(?:ed)? to|going forward|from today|correction|replaces|replaced)\b/u;

/**
 * Latest wins: of two memories on the same subject, the newer one is what
 * holds now. A memory is replaced when a newer one was stored with
 * `supersedes` naming it (the store finds that one, found by this search or
 * not), or — among the memories this search found — when a newer memory of
 * the same (non-empty) type on the same subject says it changes something
 * (REVISION). A replaced memory says by which one (`superseded_by`), the newer
 * one which it replaces (`supersedes`), and the replaced one's relevance is
 * halved and, when its successor was found too, at most the successor's: it
 * ranks below it (equal scores: the most recent first), and a default search
 * (min 0.5) leaves it out unless it matched well.
 */
export function latestWins(found: readonly Found[], glossary: Glossary): Shown[] {
  const shown: Shown[] = found.map((f) => ({
    ...f,
    supersedes: f.record.supersedes === "" ? [] : [f.record.supersedes],
    superseded_by: f.record.superseded_by,
  }));
  const newestFirst = [...shown].sort((a, b) => b.record.updated_at.getTime() - a.record.updated_at.getTime());
  const subjects = new Map<Shown, Map<string, number>>();
  const subjectOf = (s: Shown) => {
    let words = subjects.get(s);
    if (!words) {
      words = subjectWords(s.record, glossary);
      subjects.set(s, words);
    }
    return words;
  };
  newestFirst.forEach((newer, i) => {
    if (newer.record.memory_type === "" || !revises(newer.record)) return;
    for (const older of newestFirst.slice(i + 1)) {
      if (older.superseded_by !== "" || older.record.memory_type !== newer.record.memory_type) continue;
      if (older.record.updated_at.getTime() >= newer.record.updated_at.getTime()) continue;
      if (overlap(subjectOf(older), subjectOf(newer)) < SAME_SUBJECT) continue;
      older.superseded_by = newer.record.memory_key;
      newer.supersedes.push(older.record.memory_key);
    }
  });
  // Newest first, so a successor's own relevance is settled before it caps its predecessor's.
  const byKey = new Map(shown.map((s) => [s.record.memory_key, s]));
  for (const s of newestFirst) {
    if (s.superseded_by === "") continue;
    const successor = byKey.get(s.superseded_by);
    const half = s.relevance * SUPERSEDED_FACTOR;
    s.relevance = round3(successor ? Math.min(half, successor.relevance) : half);
  }
  return shown.sort(
    (a, b) =>
      b.relevance - a.relevance ||
      b.record.updated_at.getTime() - a.record.updated_at.getTime() ||
      (a.record.memory_key < b.record.memory_key ? -1 : 1),
  );
}

function revises(m: MemoryRecord): boolean {
  return REVISION.test(normalizeText(subjectText(m)));
}

/**
 * Its summary and the start of its content; a sensitive memory's summary
 * alone, as search never looks at its content (what replaces what is shown to every caller).
 */
function subjectText(m: MemoryRecord): string {
  return m.sensitive ? m.summary : `${m.summary}\n${[...m.content].slice(0, SUBJECT_CHARS).join("")}`;
}

/** What a memory is about: the words (and glossary groups) of its subject text, by weight. */
function subjectWords(m: MemoryRecord, glossary: Glossary): Map<string, number> {
  const text = subjectText(m);
  const words = new Map<string, number>();
  for (const t of [...searchTokens(text), ...glossary.markers(text)]) if (!STOP_WORDS.has(t)) words.set(t, idfOf(t));
  return words;
}

/** The share of the lighter subject's weight that both hold. */
function overlap(a: Map<string, number>, b: Map<string, number>): number {
  const weight = (m: Map<string, number>) => [...m.values()].reduce((s, w) => s + w, 0);
  const smaller = Math.min(weight(a), weight(b));
  if (smaller === 0) return 0;
  let shared = 0;
  for (const [t, w] of a) if (b.has(t)) shared += w;
  return shared / smaller;
}
