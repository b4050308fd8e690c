import type { Json } from "../core/json";
import type { Condition, InstanceIdentity } from "./types";

/** An identity as a stable string: its keys sorted, values JSON-encoded, so ("a_b","c") and ("a","b_c") differ. */
export function identityKey(identity: InstanceIdentity): string {
  return JSON.stringify(
    Object.keys(identity)
      .sort()
      .map((k) => [k, identity[k]]),
  );
}

/** A condition selecting exactly this instance: every primary key equal. */
export function identityCondition(identity: InstanceIdentity): Condition {
  const leaves: Condition[] = Object.entries(identity).map(([field, value]) => ({
    field,
    operation: "==",
    value,
    value_from: "const",
  }));
  return leaves.length === 1 ? leaves[0]! : { operation: "and", sub_conditions: leaves };
}

/** The instance id the specs use: the primary key value (composite keys joined by "_", in primary-key order). */
export function instanceIdOf(identity: InstanceIdentity, primaryKeys: readonly string[]): string {
  const keys = primaryKeys.length > 0 ? primaryKeys : Object.keys(identity);
  return keys.map((k) => String(identity[k] ?? "")).join("_");
}

/** An instance's display name, or `fallback` (its id) when it has none. */
export function displayOf(display: Json, fallback: string): string {
  return display === null || display === undefined || display === "" ? fallback : String(display);
}
