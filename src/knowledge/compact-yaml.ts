import { stringify } from "yaml";

/**
 * The knowledge tools' compact format (data-retrieval-tools §7.1): YAML, fewer
 * tokens than JSON for an LLM to read, written by a YAML library from the data
 * so names with colons, quotes or newlines stay intact. No line folding, so
 * long Chinese texts stay on one line. No anchors and aliases either: an
 * object met twice is written twice, which a reader needs no YAML to follow
 * (and not looking for repeats saves a fifth of the time).
 */
export function yaml(value: unknown): string {
  return stringify(value, { lineWidth: 0, aliasDuplicateObjects: false });
}
