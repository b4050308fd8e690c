import type { CallContext } from "../../core/call-context";
import { textOf } from "../../core/text";
import type { Embedder } from "../../upstream/embeddings";
import { cosine } from "../../upstream/local-embedder";
import type { CandidateMatch } from "./candidates";
import type { Mention } from "./mention";
import type { SearchField } from "./queries";

/** Candidates checked by meaning per mention at most (one embeddings request). */
const MAX_CHECKED = 24;
/**
 * Cosines of a neural embedding model mapped to confidence: below FLOOR two
 * texts share no meaning worth naming, at CEILING they say the same thing.
 */
const FLOOR = 0.5;
const CEILING = 0.85;

/**
 * With an embeddings endpoint: a candidate only the platform's full-text or
 * vector search found (no word in common with the mention) becomes a `vector`
 * or `fulltext` match when its names mean what the mention says, with a
 * confidence from their cosine; and every checked candidate carries that
 * cosine, so close candidates can be ordered by meaning. The mention and the
 * candidates' names go in one request.
 */
export async function bySemantics(
  ctx: CallContext,
  embedder: Embedder,
  mentions: readonly Mention[],
  candidates: CandidateMatch[],
  fields: readonly SearchField[],
): Promise<void> {
  const names = fields.filter((f) => f.text && f.nameLike);
  for (const [k, m] of mentions.entries()) {
    const checked = candidates
      .filter((c) => c.mentions[k]?.type !== "exact")
      .sort((a, b) => (b.mentions[k]?.confidence ?? b.engine / 2) - (a.mentions[k]?.confidence ?? a.engine / 2))
      .slice(0, MAX_CHECKED);
    const texts = checked.map((c) =>
      names
        .map((f) => textOf(c.row[f.name]))
        .filter((t): t is string => t !== undefined && t !== "")
        .join(" / "),
    );
    const todo = checked.map((c, i) => ({ c, text: texts[i]! })).filter((x) => x.text !== "");
    if (todo.length === 0) continue;
    const [q, ...vectors] = await embedder.embed(ctx, [m.text, ...todo.map((x) => x.text)]);
    todo.forEach(({ c }, i) => {
      const cos = cosine(q!, vectors[i]!);
      (c.meaning ??= mentions.map(() => undefined))[k] = cos;
      if (c.mentions[k] || c.engine === 0 || cos < FLOOR) return;
      // Found by the platform's search alone: a match by meaning, as sure as the cosine says.
      const confidence = Math.round((0.5 + 0.35 * Math.min(1, (cos - FLOOR) / (CEILING - FLOOR))) * 1000) / 1000;
      c.mentions[k] = {
        type: fields.some((f) => f.ops.has("knn")) ? "vector" : "fulltext",
        confidence,
        fields: names.map((f) => f.name),
      };
    });
  }
}
