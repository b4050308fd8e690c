import type { z } from "zod";
import type { bundleSchema } from "../../src/kn/embedded/bundle";
import { SKILL_RELATION_TYPES, SKILLS_TYPE } from "./agent-tools";

/**
 * The schema of the real `kn_medical` network, copied from its export
 * (shared/upstream/kn_medical.export.json): every object type with its data
 * properties exactly as exported — names, display names, types, comments and
 * condition_operations, quirks included (the leading quote in one display name,
 * the trailing newline in icd_id's) — and all 17 relation types. The export's
 * relations go through backing data views, so the bundle lists explicit pairs
 * instead of a `mapping`. Added here: the company type's two logic properties,
 * the `skills` type with its two relation types (agent-tools.ts), and a few
 * action types bound to tools (the export has none).
 */

type BundleInput = z.input<typeof bundleSchema>;
type ObjectTypeInput = NonNullable<BundleInput["object_types"]>[number];
type DataPropertyInput = ObjectTypeInput["data_properties"][number];

/** The operations the platform declares for a varchar property. */
const TEXT_OPS = ["==", "!=", "like", "not_like", "in", "not_in"];

function prop(
  name: string,
  display_name: string,
  comment: string,
  type = "varchar",
  condition_operations: string[] | null = TEXT_OPS,
): DataPropertyInput {
  return { name, display_name, type, comment, condition_operations: condition_operations && [...condition_operations] };
}

export const KNOWLEDGE_NETWORK: BundleInput["knowledge_network"] = {
  id: "kn_medical",
  name: "医疗知识网络",
  comment:
    "医疗知识网络支持从多维度对疾病进行深入分析，包括症状、并发症、检查项目、治疗方案及药物等。在药物分析方面，系统能够详细解析药物的类型、剂型、生产厂商等信息，为疾病治疗提供更精准的决策支持。",
  tags: [],
};

/** The metric's data: one point a month, see build.ts. */
export const APPROVED_DRUG_COUNT_METRIC = "company.approved_drug_count";

/** Added to the company type: the metric and the operator the resolver is specified against. */
const COMPANY_LOGIC_PROPERTIES: ObjectTypeInput["logic_properties"] = [
  {
    name: "approved_drug_count",
    display_name: "药品上市数量",
    type: "metric",
    comment: "企业在时间范围内获批上市的药品数量（按月统计）",
    data_source: { type: "metric", id: "metric_company_approved_drug_count" },
    unit_type: "countUnit",
    unit: "times",
    parameters: [
      {
        name: "company_id",
        type: "STRING",
        value_from: "property",
        value: "company_id",
        operation: "=",
        if_system_generate: false,
        comment: "企业ID",
      },
      {
        name: "instant",
        type: "BOOLEAN",
        value_from: "input",
        if_system_generate: true,
        comment: "是否即时查询：true 即时（单点），false 趋势（需 step）",
      },
      { name: "start", type: "INTEGER", value_from: "input", if_system_generate: true, comment: "开始时间戳（毫秒）" },
      { name: "end", type: "INTEGER", value_from: "input", if_system_generate: true, comment: "结束时间戳（毫秒）" },
      {
        name: "step",
        type: "STRING",
        value_from: "input",
        if_system_generate: true,
        comment: "趋势查询步长：day/week/month/quarter/year",
      },
    ],
  },
  {
    name: "business_health_score",
    display_name: "企业健康度评分",
    type: "operator",
    comment: "根据企业药品上市情况、产品结构与给定权重计算健康度评分（0-1）和等级（A-E）",
    data_source: { type: "operator", id: "op_business_health_score" },
    parameters: [
      {
        name: "company_id",
        type: "STRING",
        value_from: "property",
        value: "company_id",
        source: "body",
        if_system_generate: false,
        comment: "企业ID",
      },
      {
        name: "company_name",
        type: "STRING",
        value_from: "property",
        value: "company_name",
        source: "body",
        if_system_generate: false,
        comment: "企业名称",
      },
      {
        name: "model_version",
        type: "STRING",
        value_from: "const",
        value: "v2",
        source: "query",
        if_system_generate: false,
        comment: "评分模型版本",
      },
      {
        name: "weights",
        type: "OBJECT",
        value_from: "input",
        source: "body",
        if_system_generate: false,
        comment: '各维度权重，如 {"growth":0.4,"breadth":0.3,"stability":0.3}',
      },
      {
        name: "focus_categories",
        type: "ARRAY",
        value_from: "input",
        source: "body",
        if_system_generate: false,
        comment: '重点关注的药品剂型列表，如 ["片剂","注射剂"]',
      },
      {
        name: "as_of",
        type: "INTEGER",
        value_from: "input",
        source: "body",
        if_system_generate: false,
        comment: "评估时点（毫秒时间戳）",
      },
    ],
  },
];

export const OBJECT_TYPES: ObjectTypeInput[] = [
  {
    id: "checklist",
    name: "检查项目",
    comment: "检查项目",
    tags: ["检查项", "检查项目"],
    primary_keys: ["check_item_id"],
    display_key: "check_item_name",
    data_properties: [
      prop("check_item_id", "检查项ID", "检查项ID"),
      prop("check_item_name", "检查项名称", "检查项名称"),
    ],
  },
  {
    id: "disease",
    name: "疾病",
    comment: "疾病",
    tags: ["疾病"],
    primary_keys: ["disease_id"],
    display_key: "disease_name",
    data_properties: [
      prop("age", "发病年龄段，表示发病年龄群体", "发病年龄段，表示发病年龄群体"),
      prop("disease_english_name", "疾病英文名", "疾病英文名"),
      prop("disease_id", "疾病编号", "疾病编号"),
      prop("disease_name", "疾病名称", "疾病名称"),
      prop("icd_id", "国际疾病分类ID，这里采用的是ICD-10\n", "国际疾病分类ID，这里采用的是ICD-10\n"),
      prop("infection", "是否传染病，表示是否具有传染性或者传播途径", "是否传染病，表示是否具有传染性或者传播途径"),
      prop("insurance", "是否支持医保", "是否支持医保"),
      prop("money", "治疗费用", "治疗费用"),
      prop("period", "治疗周期", "治疗周期"),
      prop("rate", "治愈率", "治愈率"),
      prop("treatment", "治疗方案", "治疗方案"),
    ],
  },
  {
    id: "alias",
    name: "疾病别名",
    comment: "疾病别名",
    tags: ["疾病别名"],
    primary_keys: ["disease_alias_id"],
    display_key: "disease_alias_name",
    data_properties: [
      prop("disease_alias_id", "疾病别名ID", "疾病别名ID"),
      prop("disease_alias_name", "疾病别名", "疾病别名"),
    ],
  },
  {
    id: "symptom",
    name: "症状",
    comment: "症状",
    tags: ["症状", "表现"],
    primary_keys: ["symptom_id"],
    display_key: "symptom_name",
    data_properties: [prop("symptom_id", "症状ID", "症状id"), prop("symptom_name", "症状名", "症状名")],
  },
  {
    id: "supervision_unit",
    name: "监管单位",
    comment: "监管单位",
    tags: ["监管单位", "监管部门"],
    primary_keys: ["unit_id"],
    display_key: "unit_name",
    data_properties: [prop("unit_id", "监管单位ID", "监管单位id"), prop("unit_name", "监管单位名称", "监管单位名称")],
  },
  {
    id: "department",
    name: "科室",
    comment: "科室",
    tags: ["医疗科室", "科室"],
    primary_keys: ["department_id"],
    display_key: "department_name",
    data_properties: [prop("department_id", "科室ID", "科室id"), prop("department_name", "科室名", "科室名")],
  },
  {
    id: "drug_product_class",
    name: "药品分类",
    comment: "药品分类",
    tags: ["药品分类", "药品类别"],
    primary_keys: ["drug_product_class_id"],
    display_key: "drug_class",
    data_properties: [
      prop("drug_product_class_id", "药品分类主键ID", "药品分类主键ID", "int", []),
      prop("drug_class", "药品分类名称", "药品分类名称"),
    ],
  },
  {
    id: "drug_product_type",
    name: "药品剂型表",
    comment: "药品剂型表",
    tags: ["药品剂型"],
    primary_keys: ["drug_product_type_id"],
    display_key: "dosage_form_name",
    data_properties: [
      prop("drug_product_type_id", "剂型ID", "剂型ID，主键"),
      prop("dosage_form_name", "剂型名称", "剂型名称，如片剂、胶囊、注射剂、分散片等"),
    ],
  },
  {
    id: "executive_standard",
    name: "药品执行标准表",
    comment: "药品执行标准表，记录药品执行标准的详细信息",
    tags: ["药品执行标准"],
    primary_keys: ["executive_standard_id"],
    display_key: "executive_standard_name",
    data_properties: [
      prop("executive_standard_id", "执行标准ID", "执行标准ID，主键"),
      prop("executive_standard_name", "执行标准名称", "执行标准名称，如《中国药典》2020年版"),
      prop("volume", "册数", "标准册数或版本号，如2020年版、一部、二部等"),
    ],
  },
  {
    id: "drugs",
    name: "药物",
    comment: "药物，一种药物可以对应多种药物产品",
    tags: ["药物"],
    primary_keys: ["drug_id"],
    display_key: "drug_name",
    data_properties: [prop("drug_id", "药物ID", "药物id"), prop("drug_name", "药物名", "药物名")],
  },
  {
    id: "drug_product",
    name: "药物产品",
    comment: "药物产品",
    tags: ["药物产品"],
    primary_keys: ["drug_product_id"],
    display_key: "drug_name",
    data_properties: [
      prop("drug_name", "药品名", "药品名"),
      prop("drug_product_id", "drug_product_id", "药物产品"),
      prop("calssify", "药品分类，如化学药品、中药、生物制品等", "药品分类，如化学药品、中药、生物制品等"),
      prop(
        "dosage_form",
        "剂型（Dosage Form),药品的给药形式（如片剂、胶囊、注射剂等）",
        "剂型（Dosage Form),药品的给药形式（如片剂、胶囊、注射剂等）",
      ),
      prop(
        "packaging_specification",
        "'包装规格，指药品的包装单位和数量（如10片/盒、100ml/瓶等）",
        "'包装规格，指药品的包装单位和数量（如10片/盒、100ml/瓶等）",
      ),
      prop(
        "original_drug_approval_number",
        "原药品批准文号，用于关联原研药或参比制剂",
        "原药品批准文号，用于关联原研药或参比制剂",
      ),
      prop(
        "trade_name",
        "商品名/品牌名,企业注册的品牌名称，用于商业推广（如琦玥）",
        "商品名/品牌名（Trade Name）,企业注册的品牌名称，用于商业推广（如琦玥）",
      ),
      prop("nmpa_drug", "国家药品监督管理局药品编码或相关标识", "国家药品监督管理局药品编码或相关标识"),
      prop(
        "implementation_standard",
        "药品执行的标准，如《中国药典》或企业标准",
        "药品执行的标准，如《中国药典》或企业标准",
      ),
      prop("approval_date", "药品批准日期，Unix时间戳格式", "药品批准日期，Unix时间戳格式", "int", []),
      prop("standard_number", "执行标准的编号或版本号", "执行标准的编号或版本号"),
      prop("first_registration_date", "药品第一次注册日期", "药品第一次注册日期"),
      prop("english_or_latin_name", "英文名称拉丁名", "英文名称拉丁名"),
      prop(
        "drug_approval_number",
        "国家药品监督管理局颁发的药品批准文号，用于标识药品的合法性",
        "国家药品监督管理局颁发的药品批准文号，用于标识药品的合法性",
      ),
      prop(
        "specification",
        "药品规格，指药品的含量、剂量或单位（如100mg、10ml等）",
        "药品规格，指药品的含量、剂量或单位（如100mg、10ml等）",
      ),
    ],
  },
  {
    id: "drug_product_new",
    name: "药物产品新",
    comment: "药物产品新",
    tags: ["新版", "药物产品"],
    primary_keys: ["drug_product_id"],
    display_key: "drug_name",
    data_properties: [
      prop(
        "drug_name",
        "药品通用名称（Generic Name），药品的正式化学名称",
        "药品通用名称（Generic Name），药品的正式化学名称",
        "varchar",
        null,
      ),
      prop("drug_product_id", "药物产品唯一标识ID", "药物产品唯一标识ID", "varchar", null),
      prop(
        "分类",
        "药品分类，如化学药品、中药、生物制品、抗生素等",
        "药品分类，如化学药品、中药、生物制品、抗生素等",
        "varchar",
        null,
      ),
      prop(
        "剂型",
        "剂型（Dosage Form），药品的给药形式（如片剂、胶囊、注射剂、分散片等）",
        "剂型（Dosage Form），药品的给药形式（如片剂、胶囊、注射剂、分散片等）",
        "varchar",
        null,
      ),
      prop(
        "包装规格",
        "包装规格，指药品的包装单位和数量（如10片/盒、100ml/瓶、20mg*7片/盒等）",
        "包装规格，指药品的包装单位和数量（如10片/盒、100ml/瓶、20mg*7片/盒等）",
        "varchar",
        null,
      ),
      prop(
        "原药品批准文号",
        "原药品批准文号，用于关联原研药或参比制剂",
        "原药品批准文号，用于关联原研药或参比制剂",
        "varchar",
        null,
      ),
      prop(
        "商品名",
        "商品名/品牌名（Trade Name），企业注册的品牌名称，用于商业推广",
        "商品名/品牌名（Trade Name），企业注册的品牌名称，用于商业推广",
        "varchar",
        null,
      ),
      prop(
        "国家药品监督管理局药",
        "国家药品监督管理局药品编码或相关标识信息",
        "国家药品监督管理局药品编码或相关标识信息",
        "varchar",
        null,
      ),
      prop(
        "执行标准",
        "药品执行的标准，如《中国药典》2020版或企业标准",
        "药品执行的标准，如《中国药典》2020版或企业标准",
        "varchar",
        null,
      ),
      prop("批准日期", "药品批准日期，通常为YYYY-MM-DD格式", "药品批准日期，通常为YYYY-MM-DD格式", "varchar", null),
      prop(
        "标准编号",
        "执行标准的编号或版本号（如WS1-XG-001-2020）",
        "执行标准的编号或版本号（如WS1-XG-001-2020）",
        "varchar",
        null,
      ),
      prop("第一次注册日期", "药品第一次注册日期", "药品第一次注册日期", "varchar", null),
      prop("英文名称/拉丁名", "药品的英文名称或拉丁学名", "药品的英文名称或拉丁学名", "varchar", null),
      prop(
        "药品批准文号",
        "国家药品监督管理局颁发的药品批准文号，用于标识药品的合法性和批次",
        "国家药品监督管理局颁发的药品批准文号，用于标识药品的合法性和批次",
        "varchar",
        null,
      ),
      prop(
        "规格",
        "药品规格，指药品的含量、剂量或单位（如100mg、10ml、0.25g/片等）",
        "药品规格，指药品的含量、剂量或单位（如100mg、10ml、0.25g/片等）",
        "varchar",
        null,
      ),
    ],
  },
  {
    id: "company",
    name: "药物生厂商",
    comment: "药物生厂商",
    tags: ["厂商", "药企", "药物"],
    primary_keys: ["company_id"],
    display_key: "company_name",
    data_properties: [
      prop("company_id", "公司ID", "公司id"),
      prop("company_name", "药企名称", "药企名称"),
      prop("company_address", "公司地址", "公司地址"),
    ],
    logic_properties: COMPANY_LOGIC_PROPERTIES,
  },
  {
    id: "drug_class",
    name: "药物用途分类",
    comment: "药物用途分类",
    tags: ["药物用途", "药物用途分类"],
    primary_keys: ["drug_class_id"],
    display_key: "drug_class_name",
    data_properties: [
      prop("drug_class_id", "类型编号", "类型编号"),
      prop("drug_class_name", "药物类型名", "药物类型名"),
    ],
  },
  {
    id: "facility",
    name: "设备",
    comment: "设备，科室具有的设备，例如微波治疗仪",
    tags: ["医疗设备", "器材", "设备"],
    primary_keys: ["facility_id"],
    display_key: "facility_name",
    data_properties: [prop("facility_id", "设备ID", "设备ID，主键"), prop("facility_name", "设备名称", "设备名称")],
  },
  {
    id: "bodypart",
    name: "身体部位",
    comment: "身体部位",
    tags: ["身体部位"],
    primary_keys: ["bodypart_id"],
    display_key: "bodypart_name",
    data_properties: [
      prop("bodypart_id", "身体部位ID", "身体部位id"),
      prop("bodypart_name", "身体部位名", "身体部位名"),
    ],
  },
  SKILLS_TYPE,
];

/** The export's relation types, in its order; every comment is empty there. */
const EXPORTED_RELATION_TYPES: NonNullable<BundleInput["relation_types"]> = (
  [
    ["belongs_to", "药品分类", "drug_product", "drug_product_class"],
    ["checks", "检查项", "disease", "checklist"],
    ["comly_with", "执行标准", "drug_product", "supervision_unit"],
    ["cures", "可用药物", "disease", "drugs"],
    ["department_2_facility", "配置设备", "department", "facility"],
    ["designated_to", "分诊科室", "disease", "department"],
    ["has_alias", "别名", "disease", "alias"],
    ["has_complication", "并发症", "disease", "disease"],
    ["has_symptom", "疾病症状", "disease", "symptom"],
    ["is_a_drug", "可选药品", "drugs", "drug_product"],
    ["is_a_facility", "所属科室", "department", "department"],
    ["is_a_level", "包含", "drug_class", "drug_class"],
    ["is_a_level3", "用途分类", "drugs", "drug_class"],
    ["is_form", "药品剂型", "drug_product", "drug_product_type"],
    ["produces", "厂商", "company", "drug_product"],
    ["shown_on", "体征", "disease", "bodypart"],
    ["supervises", "监管单位", "drug_product", "supervision_unit"],
  ] as const
).map(([id, name, source, target]) => ({
  id,
  name,
  comment: "",
  source_object_type_id: source,
  target_object_type_id: target,
}));

/** The export's relation types, then those binding skills (agent-tools.ts). */
export const RELATION_TYPES: NonNullable<BundleInput["relation_types"]> = [
  ...EXPORTED_RELATION_TYPES,
  ...SKILL_RELATION_TYPES,
];

/**
 * Not in the export (it has no action types): plausible ones, bound to the
 * tools of agent-tools.ts (one to an MCP server's tool, one to nothing), with
 * the arguments the instance fixes and those the caller gives.
 */
export const ACTION_TYPES: NonNullable<BundleInput["action_types"]> = [
  {
    id: "generate_treatment_plan",
    name: "生成治疗方案",
    action_type: "add",
    object_type_id: "disease",
    comment: "根据疾病与患者情况（年龄、过敏史、病情严重程度）生成个体化治疗方案草案",
    tags: ["治疗", "诊疗"],
    action_source: { type: "tool", box_id: "box_medical_assistant", tool_id: "tool_generate_treatment_plan" },
    parameters: [
      { name: "disease_id", type: "string", source: "body", value_from: "property", value: "disease_id" },
      { name: "disease_name", type: "string", source: "body", value_from: "property", value: "disease_name" },
      { name: "lang", type: "string", source: "query", value_from: "const", value: "zh-CN" },
      { name: "patient", type: "object", source: "body", value_from: "input", comment: "患者信息" },
      { name: "severity", type: "string", source: "body", value_from: "input", comment: "病情严重程度" },
      { name: "preferences", type: "array", source: "body", value_from: "input", comment: "治疗偏好" },
    ],
  },
  {
    id: "recall_drug_product",
    name: "药品召回",
    action_type: "modify",
    object_type_id: "drug_product",
    comment: "对存在质量或安全隐患的药物产品发起召回，记录召回批次、召回级别与原因",
    tags: ["药品安全", "召回"],
    action_source: { type: "tool", box_id: "box_medical_assistant", tool_id: "tool_recall_drug_product" },
    parameters: [
      { name: "drug_product_id", type: "string", source: "body", value_from: "property", value: "drug_product_id" },
      {
        name: "approval_number",
        type: "string",
        source: "body",
        value_from: "property",
        value: "drug_approval_number",
      },
      { name: "recall_level", type: "string", source: "body", value_from: "input" },
      { name: "batch_numbers", type: "array", source: "body", value_from: "input" },
      { name: "reason", type: "string", source: "body", value_from: "input" },
    ],
  },
  {
    id: "suspend_company_production",
    name: "暂停企业生产",
    action_type: "modify",
    object_type_id: "company",
    comment: "监管部门责令药企暂停相关品种的生产，直至整改完成并通过复查",
    tags: ["监管", "药企"],
  },
  {
    id: "add_disease_alias",
    name: "新增疾病别名",
    action_type: "add",
    object_type_id: "alias",
    comment: "为疾病登记新的俗称或缩写，便于按别名检索疾病",
    tags: ["疾病别名"],
    action_source: { type: "tool", box_id: "box_medical_assistant", tool_id: "tool_register_alias" },
    parameters: [
      { name: "alias_id", type: "string", source: "path", value_from: "property", value: "disease_alias_id" },
      { name: "alias", type: "string", source: "body", value_from: "input" },
      { name: "source", type: "string", source: "body", value_from: "const", value: "agent" },
    ],
  },
  {
    id: "book_department_appointment",
    name: "预约科室门诊",
    action_type: "add",
    object_type_id: "department",
    comment: "为患者预约该科室的门诊号源（通过医院服务 MCP）",
    tags: ["预约", "挂号"],
    action_source: { type: "mcp", mcp_id: "mcp_hospital_service", tool_name: "book_appointment" },
    parameters: [
      { name: "department_id", type: "string", source: "body", value_from: "property", value: "department_id" },
      { name: "department_name", type: "string", source: "body", value_from: "property", value: "department_name" },
      { name: "date", type: "string", source: "body", value_from: "input" },
      { name: "period", type: "string", source: "body", value_from: "input" },
      { name: "patient", type: "object", source: "body", value_from: "input" },
    ],
  },
];
