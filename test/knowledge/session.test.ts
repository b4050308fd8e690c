import { describe, expect, it } from "vitest";
import {
  merge,
  newSince,
  type RecalledActionType,
  type RecalledObjectType,
  type RecalledRelationType,
  type SchemaRound,
  unionOf,
} from "../../src/knowledge/session";

// How a session's schema rounds add up (unionOf) and what one round adds to them (newSince).
// Types are identified by (network, id): the same id in two networks is two types.

const obj = (kn_id: string, id: string, name = id, score = 1): RecalledObjectType => ({
  kn_id,
  id,
  name,
  comment: "",
  primary_keys: ["id"],
  display_key: "id",
  data_properties: [],
  logic_properties: [],
  score,
});
const rel = (kn_id: string, id: string, name = id): RecalledRelationType => ({
  kn_id,
  id,
  name,
  comment: "",
  source_object_type_id: "a",
  target_object_type_id: "b",
  score: 1,
});
const act = (kn_id: string, id: string, name = id): RecalledActionType => ({
  kn_id,
  id,
  name,
  action_type: "modify",
  object_type_id: "a",
  comment: "",
  tags: [],
  object_type_name: "a",
});
const round = (
  n: number,
  kn_ids: string[],
  parts: Partial<Pick<SchemaRound, "object_types" | "relation_types" | "action_types">>,
): SchemaRound => ({
  round: n,
  query: `q${n}`,
  kn_ids,
  ranking_method: "embedding_lexical",
  object_types: [],
  relation_types: [],
  action_types: [],
  ...parts,
});
/** "kn/id:name" per entry, so a row shows which definition won and where it stands. */
const keys = (list: readonly { kn_id: string; id: string; name: string }[]) =>
  list.map((c) => `${c.kn_id}/${c.id}:${c.name}`);

describe("unionOf", () => {
  const rows: {
    name: string;
    rounds: SchemaRound[];
    kn_ids: string[];
    objects: string[];
    relations: string[];
    actions: string[];
  }[] = [
    { name: "no rounds, nothing", rounds: [], kn_ids: [], objects: [], relations: [], actions: [] },
    // Round 2 redefines kn1/drug (renamed): one entry, round 2's definition. It keeps the place it
    // was first seen in (before kn1/disease), not the place of its latest round.
    {
      name: "the latest round's definition wins, at the place first seen",
      rounds: [
        round(1, ["kn1"], { object_types: [obj("kn1", "drug", "药"), obj("kn1", "disease")] }),
        round(2, ["kn1"], { object_types: [obj("kn1", "symptom"), obj("kn1", "drug", "药品")] }),
      ],
      kn_ids: ["kn1"],
      objects: ["kn1/drug:药品", "kn1/disease:disease", "kn1/symptom:symptom"],
      relations: [],
      actions: [],
    },
    // The same id in two networks is two types; keying by id alone would keep one.
    {
      name: "the same id in two networks is two entries",
      rounds: [
        round(1, ["kn1"], {
          object_types: [obj("kn1", "drug")],
          relation_types: [rel("kn1", "treats")],
          action_types: [act("kn1", "order")],
        }),
        round(2, ["kn2"], {
          object_types: [obj("kn2", "drug")],
          relation_types: [rel("kn2", "treats")],
          action_types: [act("kn2", "order")],
        }),
      ],
      kn_ids: ["kn1", "kn2"],
      objects: ["kn1/drug:drug", "kn2/drug:drug"],
      relations: ["kn1/treats:treats", "kn2/treats:treats"],
      actions: ["kn1/order:order", "kn2/order:order"],
    },
    // Relations and actions follow the same rule as object types: one per (network, id), latest wins.
    {
      name: "relations and actions: latest definition wins",
      rounds: [
        round(1, ["kn1"], {
          relation_types: [rel("kn1", "treats", "治疗")],
          action_types: [act("kn1", "order", "下单")],
        }),
        round(2, ["kn1"], {
          relation_types: [rel("kn1", "treats", "用于治疗")],
          action_types: [act("kn1", "order", "订购")],
        }),
      ],
      kn_ids: ["kn1"],
      objects: [],
      relations: ["kn1/treats:用于治疗"],
      actions: ["kn1/order:订购"],
    },
    // Networks are collected once each, first-seen first, even from a round that recalled nothing.
    {
      name: "networks collected once, in first-seen order",
      rounds: [round(1, ["kn2", "kn1"], {}), round(2, ["kn1", "kn3"], {}), round(3, ["kn2"], {})],
      kn_ids: ["kn2", "kn1", "kn3"],
      objects: [],
      relations: [],
      actions: [],
    },
  ];
  it.each(rows)("$name", ({ rounds, kn_ids, objects, relations, actions }) => {
    const u = unionOf(rounds);
    expect(u.kn_ids).toEqual(kn_ids);
    expect(keys(u.object_types)).toEqual(objects);
    expect(keys(u.relation_types)).toEqual(relations);
    expect(keys(u.action_types)).toEqual(actions);
    // rounds counts the rounds given, including those that added nothing.
    expect(u.rounds).toBe(rounds.length);
    // A union extended by the later rounds is the union of them all, whatever the split.
    for (let at = 0; at <= rounds.length; at++)
      expect(merge(unionOf(rounds.slice(0, at)), rounds.slice(at))).toEqual(u);
  });

  it("keeps the winning definition whole (score included), not a merge of the rounds", () => {
    const u = unionOf([
      round(1, ["kn1"], { object_types: [obj("kn1", "drug", "药", 0.9)] }),
      round(2, ["kn1"], { object_types: [obj("kn1", "drug", "药品", 0.2)] }),
    ]);
    expect(u.object_types).toEqual([obj("kn1", "drug", "药品", 0.2)]);
  });
});

describe("newSince", () => {
  const before = unionOf([
    round(1, ["kn1"], {
      object_types: [obj("kn1", "drug"), obj("kn1", "disease")],
      relation_types: [rel("kn1", "treats")],
      action_types: [act("kn1", "order")],
    }),
  ]);
  const rows: {
    name: string;
    round: Pick<SchemaRound, "object_types" | "relation_types" | "action_types">;
    objects: string[];
    relations: string[];
    actions: string[];
  }[] = [
    // Everything this round recalled is already in the session: nothing new.
    {
      name: "a repeated round adds nothing",
      round: {
        object_types: [obj("kn1", "drug"), obj("kn1", "disease")],
        relation_types: [rel("kn1", "treats")],
        action_types: [act("kn1", "order")],
      },
      objects: [],
      relations: [],
      actions: [],
    },
    // Only symptom is new; drug was known. Order is the round's.
    {
      name: "only what the round adds",
      round: { object_types: [obj("kn1", "symptom"), obj("kn1", "drug")], relation_types: [], action_types: [] },
      objects: ["kn1/symptom:symptom"],
      relations: [],
      actions: [],
    },
    // Known by (network, id): a new definition of a known type is not new.
    {
      name: "a redefined type is not new",
      round: {
        object_types: [obj("kn1", "drug", "药品")],
        relation_types: [rel("kn1", "treats", "用于治疗")],
        action_types: [],
      },
      objects: [],
      relations: [],
      actions: [],
    },
    // kn2/drug, kn2/treats, kn2/order share ids with known kn1 types but are other networks' types:
    // new. A check by id alone would drop them.
    {
      name: "the same id in another network is new",
      round: {
        object_types: [obj("kn2", "drug")],
        relation_types: [rel("kn2", "treats")],
        action_types: [act("kn2", "order")],
      },
      objects: ["kn2/drug:drug"],
      relations: ["kn2/treats:treats"],
      actions: ["kn2/order:order"],
    },
    // Each kind is compared with its own kind: an object type called "treats" is new although a
    // relation type "treats" is known.
    {
      name: "kinds are compared separately",
      round: {
        object_types: [obj("kn1", "treats")],
        relation_types: [rel("kn1", "drug")],
        action_types: [act("kn1", "disease")],
      },
      objects: ["kn1/treats:treats"],
      relations: ["kn1/drug:drug"],
      actions: ["kn1/disease:disease"],
    },
  ];
  it.each(rows)("$name", ({ round: r, objects, relations, actions }) => {
    const added = newSince(before, r);
    expect(keys(added.object_types)).toEqual(objects);
    expect(keys(added.relation_types)).toEqual(relations);
    expect(keys(added.action_types)).toEqual(actions);
  });

  it("treats everything as new in an empty session", () => {
    const r = {
      object_types: [obj("kn1", "drug")],
      relation_types: [rel("kn1", "treats")],
      action_types: [act("kn1", "order")],
    };
    expect(newSince(unionOf([]), r)).toEqual(r);
  });
});
