import { type FieldViolation, invalidArgument } from "../errors/tool-error";
import type { LogicProperty, ObjectType } from "../kn/types";
import type { ResolveInput } from "./resolver-input";

/**
 * The requested properties checked against the object type's definition:
 * logic properties only (a data property is named as such), identities made of
 * every primary key and nothing else. Returns the logic properties in request
 * order; INVALID_ARGUMENT with one violation per problem otherwise.
 */
export function checkRequest(ot: ObjectType, input: ResolveInput): LogicProperty[] {
  const violations: FieldViolation[] = [];
  const logic = new Map(ot.logic_properties.map((lp) => [lp.name, lp]));
  const data = new Set(ot.data_properties.map((p) => p.name));
  input.properties.forEach((p, i) => {
    if (logic.has(p)) return;
    violations.push({
      field: `properties[${i}]`,
      description: data.has(p)
        ? `${p} is a data property of ${ot.id}, not a logic property: read it with an instance query`
        : `${p} is not a logic property of ${ot.id}; its logic properties: ${[...logic.keys()].join(", ") || "none"}`,
    });
  });
  const pks = new Set(ot.primary_keys);
  input.identities.forEach((identity, i) => {
    const missing = ot.primary_keys.filter((k) => identity[k] === undefined);
    if (missing.length > 0) {
      violations.push({
        field: `unique_identities[${i}]`,
        description: `missing primary key ${missing.join(", ")} of ${ot.id}`,
      });
    }
    for (const k of Object.keys(identity)) {
      if (pks.has(k)) continue;
      violations.push({
        field: `unique_identities[${i}].${k}`,
        description: `${k} is not a primary key of ${ot.id} (primary keys: ${ot.primary_keys.join(", ")})`,
      });
    }
  });
  if (violations.length > 0) {
    throw invalidArgument(violations, {
      message: "Ask only for logic properties of the object type, with identities made of its primary keys.",
      validValues: [...logic.keys()],
    });
  }
  return input.properties.map((p) => logic.get(p)!);
}
