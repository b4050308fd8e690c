import type { z } from "zod";
import type { bundleSchema } from "../../src/kn/embedded/bundle";
import type { SystemId } from "./vocabulary";

/**
 * What the platform's agent tools read beyond instances, for the sample:
 * the `skills` object type (find_skills) and its bindings to diseases and
 * departments, the tool box and MCP server the action types are bound to
 * (get_action_info), concept groups and metric definitions (search_schema).
 * The real export has none of these; they are written to look like what a
 * hospital's network would hold.
 */

type BundleInput = z.input<typeof bundleSchema>;
type ObjectTypeInput = NonNullable<BundleInput["object_types"]>[number];

/** Texts an agent searches skills by: exact, contains, full-text and vector. */
const SKILL_TEXT_OPS = ["==", "!=", "like", "not_like", "in", "not_in", "match", "knn"];
const KEY_OPS = ["==", "!=", "like", "not_like", "in", "not_in"];

/** The type find_skills reads (its contract: skill_id and name, description when there is one). */
export const SKILLS_TYPE: ObjectTypeInput = {
  id: "skills",
  name: "技能",
  comment: "智能体可调用的业务技能（问诊分诊、急救指引、随访管理等），绑定到适用的疾病和科室",
  tags: ["技能", "skill"],
  primary_keys: ["skill_id"],
  display_key: "name",
  data_properties: [
    { name: "skill_id", display_name: "技能ID", type: "varchar", comment: "技能ID", condition_operations: KEY_OPS },
    {
      name: "name",
      display_name: "技能名称",
      type: "varchar",
      comment: "技能名称",
      condition_operations: SKILL_TEXT_OPS,
    },
    {
      name: "description",
      display_name: "技能说明",
      type: "text",
      comment: "技能做什么、何时使用",
      condition_operations: SKILL_TEXT_OPS,
    },
    { name: "category", display_name: "技能类别", type: "varchar", comment: "技能类别", condition_operations: KEY_OPS },
  ],
};

/** Skills are bound to the instances they apply to: diseases and departments. */
export const SKILL_RELATION_TYPES: NonNullable<BundleInput["relation_types"]> = [
  {
    id: "disease_skills",
    name: "适用技能",
    comment: "",
    source_object_type_id: "disease",
    target_object_type_id: "skills",
  },
  {
    id: "department_skills",
    name: "科室技能",
    comment: "",
    source_object_type_id: "department",
    target_object_type_id: "skills",
  },
];

const SYSTEM_LABELS: Record<SystemId, string> = {
  resp: "呼吸系统",
  cardio: "心血管系统",
  digest: "消化系统",
  neuro: "神经系统",
  endo: "内分泌代谢",
  renal: "肾脏泌尿",
  blood: "血液系统",
  rheum: "风湿免疫",
  infect: "感染性",
  skin: "皮肤",
  ortho: "骨骼肌肉",
  eye: "眼科",
  ent: "耳鼻喉",
  obgyn: "妇产科",
  peds: "儿科",
  tumor: "肿瘤",
  psych: "精神心理",
  oral: "口腔",
};

export interface SkillRow {
  skill_id: string;
  name: string;
  description: string;
  category: string;
}

/** Where a skill is bound: diseases (all of a system, or named ones) and departments. */
export interface SkillBinding {
  skill: SkillRow;
  /** Every disease of these systems. */
  systems: SystemId[];
  /** Diseases whose name is one of these. */
  diseases: string[];
  /** Every disease. */
  allDiseases: boolean;
  departments: string[];
}

/** The skills and their bindings; `departmentsOf` gives a system's departments. */
export function skillCatalog(departmentsOf: (system: SystemId) => string[]): SkillBinding[] {
  const triage = (Object.entries(SYSTEM_LABELS) as [SystemId, string][]).map(
    ([system, label]): SkillBinding => ({
      skill: {
        skill_id: `skill_triage_${system}`,
        name: `${label}疾病问诊分诊`,
        description: `按${label}疾病的问诊要点追问症状、病程与既往史，给出可能的疾病、建议的检查项目和分诊科室`,
        category: "问诊分诊",
      },
      systems: [system],
      diseases: [],
      allDiseases: false,
      departments: departmentsOf(system),
    }),
  );
  const bound = (skill: SkillRow, where: Partial<Omit<SkillBinding, "skill">>): SkillBinding => ({
    skill,
    systems: [],
    diseases: [],
    allDiseases: false,
    departments: [],
    ...where,
  });
  return [
    ...triage,
    bound(
      {
        skill_id: "skill_airway_emergency",
        name: "急症现场急救指引",
        description: "异物阻塞、喉头水肿、心跳骤停等急症的现场急救步骤：海姆立克法、体位与吸氧、转运与插管指征",
        category: "急救",
      },
      { diseases: ["上、下气道梗阻", "呼吸衰竭", "急性喉炎"], departments: ["急诊科", "呼吸内科"] },
    ),
    bound(
      {
        skill_id: "skill_chronic_followup",
        name: "慢病随访管理",
        description: "高血压、糖尿病等慢性病的随访计划：血压血糖监测频率、用药依从性提醒与定期复查安排",
        category: "随访",
      },
      {
        diseases: ["高血压", "糖尿病", "糖尿病（2型）", "糖尿病肾病", "冠状动脉粥样硬化性心脏病"],
        departments: ["内分泌科", "心血管内科"],
      },
    ),
    bound(
      {
        skill_id: "skill_treatment_plan",
        name: "治疗方案生成",
        description: "根据疾病、患者年龄与病情严重程度生成个体化治疗方案草案：用药、检查与随访建议",
        category: "治疗",
      },
      { allDiseases: true },
    ),
    bound(
      {
        skill_id: "skill_drug_interaction",
        name: "药物相互作用检查",
        description: "检查多种药物同时使用时的相互作用、配伍禁忌与重复用药，提示剂量调整",
        category: "用药",
      },
      {},
    ),
    bound(
      {
        skill_id: "skill_report_reading",
        name: "检查报告解读",
        description: "解读血常规、生化、影像等检查报告中的异常指标，说明可能的临床意义与下一步检查",
        category: "检查",
      },
      {},
    ),
  ];
}

/** The tool box the action types' tools are in, as agent-operator-integration serves it. */
export const TOOL_BOXES: NonNullable<BundleInput["tool_boxes"]> = [
  {
    box_id: "box_medical_assistant",
    name: "医疗助手工具箱",
    tools: [
      {
        tool_id: "tool_generate_treatment_plan",
        name: "generate_treatment_plan",
        description: "根据疾病与患者情况生成治疗方案草案（用药、检查、随访建议）",
        metadata: {
          api_spec: {
            parameters: [
              {
                name: "x-request-source",
                in: "header",
                required: false,
                schema: { type: "string" },
                description: "调用来源标识",
              },
              {
                name: "lang",
                in: "query",
                required: false,
                schema: { type: "string", enum: ["zh-CN", "en-US"] },
                description: "方案语言",
              },
            ],
            request_body: {
              content: {
                "application/json": {
                  schema: {
                    type: "object",
                    required: ["disease_id", "patient"],
                    properties: {
                      disease_id: { type: "string", description: "疾病ID" },
                      disease_name: { type: "string", description: "疾病名称" },
                      patient: { $ref: "#/components/schemas/Patient" },
                      severity: {
                        type: "string",
                        enum: ["mild", "moderate", "severe"],
                        description: "病情严重程度：mild 轻度，moderate 中度，severe 重度",
                      },
                      preferences: {
                        type: "array",
                        items: { type: "string" },
                        description: "治疗偏好，如 药物治疗、手术治疗、康复治疗",
                      },
                    },
                  },
                },
              },
            },
            components: {
              schemas: {
                Patient: {
                  type: "object",
                  description: "患者信息",
                  required: ["age"],
                  properties: {
                    age: { type: "integer", description: "年龄（岁）" },
                    gender: { type: "string", enum: ["male", "female"], description: "性别" },
                    allergies: { type: "array", items: { type: "string" }, description: "过敏药物" },
                    history: { $ref: "#/components/schemas/History" },
                  },
                },
                History: {
                  type: "object",
                  description: "既往史",
                  properties: {
                    chronic_diseases: { type: "array", items: { type: "string" }, description: "慢性病" },
                    surgeries: { type: "array", items: { type: "string" }, description: "手术史" },
                  },
                },
              },
            },
          },
        },
      },
      {
        tool_id: "tool_recall_drug_product",
        name: "recall_drug_product",
        description: "登记药品召回：召回级别、涉及批号与原因，并通知生产企业",
        metadata: {
          api_spec: {
            parameters: [],
            request_body: {
              content: {
                "application/json": {
                  schema: {
                    type: "object",
                    required: ["drug_product_id", "recall_level", "reason"],
                    properties: {
                      drug_product_id: { type: "string", description: "药品ID" },
                      approval_number: { type: "string", description: "药品批准文号" },
                      recall_level: {
                        type: "string",
                        enum: ["一级", "二级", "三级"],
                        description: "召回级别（一级最严重）",
                      },
                      batch_numbers: { type: "array", items: { type: "string" }, description: "涉及批号" },
                      reason: { type: "string", description: "召回原因" },
                    },
                  },
                },
              },
            },
          },
        },
      },
      {
        tool_id: "tool_register_alias",
        name: "register_disease_alias",
        description: "为疾病登记新的别名（俗称、缩写）",
        metadata: {
          api_spec: {
            parameters: [
              { name: "alias_id", in: "path", required: true, schema: { type: "string" }, description: "别名ID" },
            ],
            request_body: {
              content: {
                "application/json": {
                  schema: {
                    type: "object",
                    required: ["alias"],
                    properties: {
                      alias: { type: "string", description: "新别名" },
                      source: { type: "string", description: "别名出处" },
                    },
                  },
                },
              },
            },
          },
        },
      },
    ],
  },
];

/** The hospital's MCP server, bound to the appointment action. */
export const MCP_SERVERS: NonNullable<BundleInput["mcp_servers"]> = [
  {
    mcp_id: "mcp_hospital_service",
    name: "医院服务 MCP",
    tools: [
      {
        name: "book_appointment",
        description: "为患者预约科室门诊号源",
        inputSchema: {
          type: "object",
          required: ["department_id", "patient", "date"],
          properties: {
            department_id: { type: "string", description: "科室ID" },
            department_name: { type: "string", description: "科室名称" },
            date: { type: "string", description: "就诊日期，YYYY-MM-DD" },
            period: { type: "string", enum: ["上午", "下午"], description: "时段" },
            patient: { $ref: "#/$defs/Patient" },
          },
          $defs: {
            Patient: {
              type: "object",
              required: ["name", "phone"],
              properties: {
                name: { type: "string", description: "患者姓名" },
                phone: { type: "string", description: "联系电话" },
              },
            },
          },
        },
      },
      {
        name: "query_queue",
        description: "查询科室当前排队人数",
        inputSchema: {
          type: "object",
          required: ["department_id"],
          properties: { department_id: { type: "string", description: "科室ID" } },
        },
      },
    ],
  },
];

/** Business areas of the network, for scoping schema search. */
export const CONCEPT_GROUPS: NonNullable<BundleInput["concept_groups"]> = [
  {
    id: "diagnosis",
    name: "疾病诊疗",
    comment: "疾病、症状、检查、体征部位、分诊科室与诊疗技能",
    tags: ["诊疗"],
    object_type_ids: ["disease", "alias", "symptom", "checklist", "bodypart", "department", "skills"],
  },
  {
    id: "medication",
    name: "用药",
    comment: "疾病的可用药物、药物用途分类与药品",
    tags: ["用药"],
    object_type_ids: ["disease", "drugs", "drug_class", "drug_product"],
  },
  {
    id: "drug_regulation",
    name: "药品监管",
    comment: "药品、生产企业、监管单位、执行标准、药品分类与剂型",
    tags: ["监管"],
    object_type_ids: [
      "drug_product",
      "drug_product_new",
      "company",
      "supervision_unit",
      "executive_standard",
      "drug_product_class",
      "drug_product_type",
    ],
  },
  {
    id: "hospital_resources",
    name: "医院资源",
    comment: "科室及其配置的设备",
    tags: ["资源"],
    object_type_ids: ["department", "facility"],
  },
];

/** Metrics defined on the network; the first is what company's logic property approved_drug_count evaluates. */
export const METRIC_DEFINITIONS: NonNullable<BundleInput["metric_definitions"]> = [
  {
    id: "metric_company_approved_drug_count",
    name: "药企获批上市药品数",
    comment: "药物生产企业在时间范围内获批上市的药品数量，按月统计",
    unit_type: "countUnit",
    unit: "times",
    metric_type: "atomic",
    scope_type: "object_type",
    scope_ref: "company",
    time_dimension: { field: "批准日期", format: "yyyy-MM-dd" },
    calculation_formula: { aggregation: "count", field: "drug_product_id", filter: "批准日期 in [start, end)" },
    analysis_dimensions: ["company_id", "剂型"],
  },
  {
    id: "metric_disease_cure_rate",
    name: "疾病平均治愈率",
    comment: "疾病治愈率（rate 属性）的平均值，可按传染性、医保类别分组",
    unit_type: "numUnit",
    unit: "ratio",
    metric_type: "atomic",
    scope_type: "object_type",
    scope_ref: "disease",
    calculation_formula: { aggregation: "avg", field: "rate" },
    analysis_dimensions: ["infection", "insurance"],
  },
];
