import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

/**
 * Small networks for the agent tools' edge cases the sample does not have,
 * written to a temporary directory as KN bundle files:
 * - kn_no_skills: no skills type at all;
 * - kn_bad_skills: a skills type without `name`;
 * - kn_edge: skills searchable by nothing but `==`, a ward type bound to
 *   skills by a relation type with no pair, and action types bound to tools
 *   whose definitions are broken (a parameter defined twice, a $ref to
 *   nothing) or deep (references five levels down, a cycle).
 */
export function writeEdgeBundles(): string[] {
  const dir = mkdtempSync(join(tmpdir(), "kn-tools-"));
  const bundles = [noSkills(), badSkills(), edge()];
  return bundles.map((bundle) => {
    const path = join(dir, `${bundle.knowledge_network.id}.json`);
    writeFileSync(path, JSON.stringify(bundle));
    return path;
  });
}

const text = (name: string, ops: string[] = ["==", "like"]) => ({
  name,
  display_name: name,
  type: "varchar",
  condition_operations: ops,
});

const ward = {
  id: "ward",
  name: "病房",
  primary_keys: ["ward_id"],
  display_key: "ward_name",
  data_properties: [text("ward_id"), text("ward_name")],
};

function noSkills() {
  return {
    knowledge_network: { id: "kn_no_skills", name: "没有技能的网络" },
    object_types: [ward],
    objects: { ward: [{ ward_id: "w1", ward_name: "一病区" }] },
  };
}

function badSkills() {
  return {
    knowledge_network: { id: "kn_bad_skills", name: "技能不全的网络" },
    object_types: [
      ward,
      {
        id: "skills",
        name: "技能",
        primary_keys: ["skill_id"],
        display_key: "title",
        data_properties: [text("skill_id"), text("title")],
      },
    ],
    objects: { skills: [{ skill_id: "s1", title: "查房" }] },
  };
}

/** A path-schema chain Level1 → Level2 → … → Level5, and a Node that refers to itself. */
const deepComponents = {
  schemas: {
    ...Object.fromEntries(
      [1, 2, 3, 4, 5].map((n) => [
        `Level${n}`,
        {
          type: "object",
          description: `level ${n}`,
          properties: n < 5 ? { next: { $ref: `#/components/schemas/Level${n + 1}` } } : { leaf: { type: "string" } },
        },
      ]),
    ),
    Node: {
      type: "object",
      description: "a tree node",
      properties: { child: { $ref: "#/components/schemas/Node" }, label: { type: "string" } },
    },
  },
};

function tool(tool_id: string, api_spec: Record<string, unknown>) {
  return { tool_id, name: tool_id, description: `tool ${tool_id}`, metadata: { api_spec } };
}

const jsonBody = (properties: Record<string, unknown>) => ({
  content: { "application/json": { schema: { type: "object", properties } } },
});

function edge() {
  const action = (id: string, tool_id: string) => ({
    id,
    name: id,
    action_type: "modify",
    object_type_id: "ward",
    action_source: { type: "tool", box_id: "box_edge", tool_id },
    parameters: [{ name: "ward_id", value_from: "property", value: "ward_id" }],
  });
  return {
    knowledge_network: { id: "kn_edge", name: "边界情况" },
    object_types: [
      ward,
      {
        id: "skills",
        name: "技能",
        primary_keys: ["skill_id"],
        display_key: "name",
        data_properties: [text("skill_id"), text("name", ["=="])],
      },
    ],
    relation_types: [
      { id: "ward_skills", name: "病房技能", source_object_type_id: "ward", target_object_type_id: "skills" },
    ],
    action_types: [
      action("dup_param", "tool_dup"),
      action("deep_refs", "tool_deep"),
      action("dangling_ref", "tool_dangling"),
    ],
    objects: {
      ward: [{ ward_id: "w1", ward_name: "一病区" }],
      skills: [
        { skill_id: "s1", name: "查房记录" },
        { skill_id: "s2", name: "交班" },
      ],
    },
    tool_boxes: [
      {
        box_id: "box_edge",
        tools: [
          tool("tool_dup", {
            parameters: [{ name: "lang", in: "query", schema: { type: "string" } }],
            request_body: jsonBody({ lang: { type: "string" }, ward_id: { type: "string" } }),
          }),
          tool("tool_deep", {
            request_body: jsonBody({
              ward_id: { type: "string" },
              chain: { $ref: "#/components/schemas/Level1" },
              tree: { $ref: "#/components/schemas/Node" },
            }),
            components: deepComponents,
          }),
          tool("tool_dangling", {
            request_body: jsonBody({ ward_id: { type: "string" }, x: { $ref: "#/components/schemas/Missing" } }),
          }),
        ],
      },
    ],
  };
}
