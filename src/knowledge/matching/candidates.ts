import type { Row } from "../../kn/types";
import type { MatchType } from "./score";

/** How one instance answers one mention. */
export interface MentionMatch {
  type: MatchType;
  /** 0..1, the field's weight applied. */
  confidence: number;
  /** The properties that matched ("<relation>:<alias property>" for an alias). */
  fields: string[];
}

export interface CandidateMatch {
  row: Row;
  /** One entry per mention: its best match in this instance, if any. */
  mentions: (MentionMatch | undefined)[];
  /** One entry per mention, with an embeddings endpoint: how close in meaning its names are (cosine), for ordering close matches. */
  meaning?: (number | undefined)[];
  /** The platform's full-text or vector score, relative to the best of the lookup (0..1), when it gave one. */
  engine: number;
}
