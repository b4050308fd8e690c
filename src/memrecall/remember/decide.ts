import { createHash } from "node:crypto";
import { comparable } from "../../core/text";
import type { MemoryRecord } from "../../store/memories/memory-store";
import { type Candidate, holdsMostOf, namesDiffer, sameText, saysNothingNew, subjectOverlap } from "./candidates";

export type Operation = "ADD" | "UPDATE" | "SUPERSEDE" | "NOOP";

/** What to do with one candidate. */
export interface Decision {
  operation: Operation;
  /** ADD, SUPERSEDE: the new memory's key; UPDATE: the memory rewritten; NOOP: the memory that already knows it. */
  memory_key: string;
  /** SUPERSEDE: the memory replaced. */
  supersedes: string;
  reason: string;
}

/** Two statements share a subject when this much of the lighter one is in both (candidates.ts subjectOverlap). */
export const SAME_SUBJECT = 0.5;
/**
 * A statement that says it changes something ("以后", "switched to") is about
 * what it changes even when it shares less with it: it names the new thing,
 * not the old one.
 */
const SAME_SUBJECT_WHEN_REVISING = 0.3;
/** A new statement extends an old one when it holds this share of the old one's subject. */
const EXTENDS = 0.6;

/** The key of a memory RememberConversation writes: its type and a digest of its text, so the same statement maps to the same key. */
export function keyOf(c: Pick<Candidate, "memory_type" | "content">): string {
  return `${c.memory_type}_${createHash("sha256").update(comparable(c.content)).digest("hex").slice(0, 12)}`;
}

/**
 * Rules mode's decision for a candidate against the user's most similar
 * memories (`similar`, best first; a memory already replaced is never a target):
 *
 * - NOOP: a memory says the same, or the memory of this type on the same
 *   subject already holds every word of it;
 * - UPDATE: that memory's words are all in the candidate, which adds to it
 *   (and says no change);
 * - SUPERSEDE: the same subject, said differently: a changed preference or fact;
 * - ADD: nothing on the subject.
 *
 * A command is never replaced by another (two commands on one service are two
 * commands); a configuration is on the subject of its keys.
 */
export function decideByRules(c: Candidate, similar: readonly MemoryRecord[]): Decision {
  const own = keyOf(c);
  const same = similar.find((r) => r.memory_key === own || sameText(r.content, c.content));
  if (same) return noop(same.memory_key, "已有内容相同的记忆");
  const current = similar.filter((r) => r.superseded_by === "" && r.memory_type === c.memory_type);
  if (c.memory_type === "command") return add(own, "新的命令");
  const scored = current
    .map((r) => ({
      r,
      overlap:
        c.memory_type === "configuration"
          ? keysOverlap(c.content, r.content)
          : subjectOverlap(c.content, `${r.summary}\n${r.content}`),
    }))
    // Python's indentation and YAML's are two preferences: names that differ make two subjects, unless the
    // statement says it changes one for the other ("switched to Neovim").
    .filter(
      (s) =>
        s.overlap >= (c.revises ? SAME_SUBJECT_WHEN_REVISING : SAME_SUBJECT) &&
        (c.revises || !namesDiffer(c.content, `${s.r.summary}\n${s.r.content}`)),
    )
    .sort((a, b) => b.overlap - a.overlap);
  const best = scored[0]?.r;
  if (!best) return add(own, "没有同一主题的记忆");
  const old = `${best.summary}\n${best.content}`;
  if (c.memory_type === "configuration" ? configHeld(c.content, best.content) : saysNothingNew(c.content, old))
    return noop(best.memory_key, `记忆 ${best.memory_key} 已包含这些内容`);
  const extendsOld =
    c.memory_type === "configuration" && pairsOf(best.content).size > 0
      ? configExtends(c.content, best.content)
      : holdsMostOf(c.content, old, EXTENDS);
  if (!c.revises && extendsOld)
    return {
      operation: "UPDATE",
      memory_key: best.memory_key,
      supersedes: "",
      reason: `补充同一主题的记忆 ${best.memory_key}`,
    };
  return {
    operation: "SUPERSEDE",
    memory_key: own,
    supersedes: best.memory_key,
    reason: `同一主题的${c.revises ? "说法已改变" : "内容不同"}，取代 ${best.memory_key}`,
  };
}

function add(key: string, reason: string): Decision {
  return { operation: "ADD", memory_key: key, supersedes: "", reason };
}

function noop(key: string, reason: string): Decision {
  return { operation: "NOOP", memory_key: key, supersedes: "", reason };
}

/** key=value (or key: value) pairs of a configuration text, keys lower-cased. */
function pairsOf(text: string): Map<string, string> {
  const out = new Map<string, string>();
  for (const m of text.matchAll(/(?:^|\s)(?:export\s+)?([A-Za-z_][A-Za-z0-9_.-]{0,63})\s*[=:]\s*([^\s,;]+)/gm))
    out.set(m[1]!.toLowerCase(), m[2]!.replace(/^["']|["']$/g, ""));
  return out;
}

/** The share of the smaller configuration's keys that both set. */
function keysOverlap(a: string, b: string): number {
  const pa = pairsOf(a);
  const pb = pairsOf(b);
  const smaller = Math.min(pa.size, pb.size);
  if (smaller === 0) return subjectOverlap(a, b);
  return [...pa.keys()].filter((k) => pb.has(k)).length / smaller;
}

/** Every pair of `next` is in `old` with the same value. */
function configHeld(next: string, old: string): boolean {
  const pn = pairsOf(next);
  const po = pairsOf(old);
  return pn.size > 0 && [...pn].every(([k, v]) => po.get(k) === v);
}

/** `next` keeps every pair of `old` as it was and adds some. */
function configExtends(next: string, old: string): boolean {
  const pn = pairsOf(next);
  const po = pairsOf(old);
  return po.size > 0 && [...po].every(([k, v]) => pn.get(k) === v);
}
