import type { KnowledgeDeps } from "../../deps";

/** What SearchSchema reads: the network, and what ranks concepts. */
export type SearchSchemaDeps = Pick<KnowledgeDeps, "backend" | "embedder" | "reranker" | "descriptions">;

/** A problem that did not stop the call. */
export interface SchemaWarning {
  target: string;
  reason: string;
  message: string;
}
