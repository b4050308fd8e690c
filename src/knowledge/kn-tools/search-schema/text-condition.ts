import type { Condition } from "../../../kn/types";

/**
 * The platform's concept-search condition for a question: vector neighbours
 * (`knn`, the `k` nearest) or full-text matches (`match`) over every text
 * field, so that a concept is found by meaning or by its words.
 */
export function textSearchCondition(query: string, k: number): Condition {
  return {
    operation: "or",
    sub_conditions: [
      { field: "*", operation: "knn", value: query, value_from: "const", limit_key: "k", limit_value: k },
      { field: "*", operation: "match", value: query, value_from: "const" },
    ],
  };
}
