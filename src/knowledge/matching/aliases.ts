import type { KnowledgeNetwork, ObjectType } from "../../kn/types";

/**
 * How an object type's instances are named otherwise: an alias type linked to
 * it by an alias relation (kn_medical: `alias` via `has_alias`), found in the
 * network's schema when schema recall records the type, so keyword context
 * and kn_search can look mentions up among the aliases too.
 */
export interface AliasLink {
  relation_type_id: string;
  alias_object_type_id: string;
  /** The alias type's text properties that name it (its display key first). */
  alias_fields: { name: string; condition_operations: string[] }[];
  /** The relation points from the alias type to the named type (else from the named type to the alias). */
  alias_is_source: boolean;
}

/** Words that mark a relation or a type as "another name for": ids, names and comments, in Chinese and English. */
const ALIAS_WORDS =
  /alias|synonym|also[\s_-]?known|\baka\b|nickname|other[\s_-]?name|别名|又名|俗称|简称|同义|异名|曾用名|别称/i;
const TEXT_TYPES = /char|text|string|keyword/i;

/**
 * The alias links of `ot` in `kn`: relations between `ot` and another type
 * that is an alias type (its id, name or comment says so), or that a relation
 * saying so (or named in `configured`: ids, or "kn_id/relation_id" for one
 * network) points to from `ot` — has_alias: disease → alias. A type that is
 * itself an alias type has none (an alias is not named by aliases). The alias
 * type must have a text display key to be looked up by.
 */
export function aliasLinksOf(kn: KnowledgeNetwork, ot: ObjectType, configured: readonly string[]): AliasLink[] {
  if (isAliasType(ot)) return [];
  const named = new Set(configured);
  const types = new Map(kn.object_types.map((o) => [o.id, o]));
  const links: AliasLink[] = [];
  for (const r of kn.relation_types) {
    if (r.source_object_type_id === r.target_object_type_id) continue;
    const aliasIsSource = r.target_object_type_id === ot.id;
    if (!aliasIsSource && r.source_object_type_id !== ot.id) continue;
    const other = types.get(aliasIsSource ? r.source_object_type_id : r.target_object_type_id);
    if (!other) continue;
    const saidByRelation =
      named.has(r.id) ||
      named.has(`${kn.id}/${r.id}`) ||
      [r.id, r.name, r.comment].some((s) => ALIAS_WORDS.test(s ?? ""));
    if (!isAliasType(other) && !(saidByRelation && !aliasIsSource)) continue;
    const fields = aliasFields(other);
    if (fields.length === 0) continue;
    links.push({
      relation_type_id: r.id,
      alias_object_type_id: other.id,
      alias_fields: fields,
      alias_is_source: aliasIsSource,
    });
  }
  return links;
}

function isAliasType(o: ObjectType): boolean {
  return [o.id, o.name, o.comment].some((s) => ALIAS_WORDS.test(s ?? ""));
}

/** The alias type's display key, when it is text and can be asked for with == or like. */
function aliasFields(o: ObjectType): AliasLink["alias_fields"] {
  const display = o.data_properties.find((p) => p.name === o.display_key);
  if (!display || !TEXT_TYPES.test(display.type)) return [];
  if (!display.condition_operations.some((op) => op === "==" || op === "like")) return [];
  return [{ name: display.name, condition_operations: display.condition_operations }];
}
