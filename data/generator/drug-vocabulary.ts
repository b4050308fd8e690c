import type { SystemId } from "./vocabulary";

/**
 * Drugs and what a drug product is made of: the two-level use classification
 * (drug_class, is_a_level), the drug product classes (化学药品, 中成药, …),
 * dosage forms and the executive standards products are made to.
 */

/** How a dosage form is specified and packed. */
export type PackKind =
  | "tablet"
  | "capsule"
  | "injection"
  | "powder"
  | "granule"
  | "liquid"
  | "eye"
  | "topical"
  | "inhaler"
  | "suppository"
  | "pill"
  | "patch";

export interface DosageForm {
  /** The drug_product_type name, e.g. 片剂. */
  name: string;
  /** Product name = drug name + suffix (阿莫西林 + 胶囊), or prefix + drug name (注射用 + 头孢曲松钠). */
  suffix?: string;
  prefix?: string;
  /** English product name = drug English name + en (or "… for Injection"). */
  en: string;
  pack: PackKind;
}

export const DOSAGE_FORMS: DosageForm[] = [
  { name: "片剂", suffix: "片", en: "Tablets", pack: "tablet" },
  { name: "胶囊", suffix: "胶囊", en: "Capsules", pack: "capsule" },
  { name: "注射剂", suffix: "注射液", en: "Injection", pack: "injection" },
  { name: "分散片", suffix: "分散片", en: "Dispersible Tablets", pack: "tablet" },
  { name: "颗粒剂", suffix: "颗粒", en: "Granules", pack: "granule" },
  { name: "口服溶液", suffix: "口服溶液", en: "Oral Solution", pack: "liquid" },
  { name: "缓释片", suffix: "缓释片", en: "Sustained-release Tablets", pack: "tablet" },
  { name: "肠溶片", suffix: "肠溶片", en: "Enteric-coated Tablets", pack: "tablet" },
  { name: "缓释胶囊", suffix: "缓释胶囊", en: "Sustained-release Capsules", pack: "capsule" },
  { name: "肠溶胶囊", suffix: "肠溶胶囊", en: "Enteric-coated Capsules", pack: "capsule" },
  { name: "软胶囊", suffix: "软胶囊", en: "Soft Capsules", pack: "capsule" },
  { name: "注射用无菌粉末", prefix: "注射用", en: "for Injection", pack: "powder" },
  { name: "滴眼液", suffix: "滴眼液", en: "Eye Drops", pack: "eye" },
  { name: "乳膏剂", suffix: "乳膏", en: "Cream", pack: "topical" },
  { name: "软膏剂", suffix: "软膏", en: "Ointment", pack: "topical" },
  { name: "凝胶剂", suffix: "凝胶", en: "Gel", pack: "topical" },
  { name: "气雾剂", suffix: "气雾剂", en: "Aerosol", pack: "inhaler" },
  { name: "吸入粉雾剂", suffix: "吸入粉雾剂", en: "Powder for Inhalation", pack: "inhaler" },
  { name: "鼻喷雾剂", suffix: "鼻喷雾剂", en: "Nasal Spray", pack: "inhaler" },
  { name: "栓剂", suffix: "栓", en: "Suppositories", pack: "suppository" },
  { name: "散剂", suffix: "散", en: "Powder", pack: "granule" },
  { name: "含片", suffix: "含片", en: "Buccal Tablets", pack: "tablet" },
  { name: "阴道片", suffix: "阴道片", en: "Vaginal Tablets", pack: "tablet" },
  { name: "滴剂", suffix: "滴剂", en: "Drops", pack: "liquid" },
  { name: "混悬液", suffix: "混悬液", en: "Suspension", pack: "liquid" },
  { name: "含漱液", suffix: "含漱液", en: "Gargle", pack: "liquid" },
  { name: "糖浆剂", suffix: "糖浆", en: "Syrup", pack: "liquid" },
  { name: "口服液", suffix: "口服液", en: "Oral Liquid", pack: "liquid" },
  { name: "合剂", suffix: "合剂", en: "Mixture", pack: "liquid" },
  { name: "酊剂", suffix: "酊", en: "Tincture", pack: "liquid" },
  { name: "煎膏剂", suffix: "膏", en: "Concentrated Decoction", pack: "liquid" },
  { name: "丸剂", suffix: "丸", en: "Pills", pack: "pill" },
  { name: "滴丸剂", suffix: "滴丸", en: "Dripping Pills", pack: "pill" },
  { name: "贴膏剂", suffix: "贴膏", en: "Plaster", pack: "patch" },
  { name: "贴剂", suffix: "贴剂", en: "Transdermal Patches", pack: "patch" },
];

/** Specification (规格) and packaging (包装规格) choices by pack kind. */
export const PACKING: Record<PackKind, { specs: string[]; packs: string[] }> = {
  tablet: {
    specs: ["5mg", "10mg", "20mg", "25mg", "50mg", "0.1g", "0.125g", "0.25g", "0.5g"],
    packs: ["12片/盒", "24片/盒", "10片×2板/盒", "14片×2板/盒", "7片×4板/盒", "100片/瓶"],
  },
  capsule: {
    specs: ["20mg", "0.1g", "0.125g", "0.15g", "0.25g", "0.3g", "0.5g"],
    packs: ["12粒/盒", "24粒/盒", "10粒×2板/盒", "6粒×3板/盒", "30粒/瓶"],
  },
  injection: {
    specs: ["1ml:10mg", "2ml:40mg", "2ml:0.1g", "5ml:0.5g", "10ml:1g", "100ml:0.2g"],
    packs: ["1支/盒", "5支/盒", "10支/盒", "1瓶/盒"],
  },
  powder: { specs: ["0.25g", "0.5g", "1.0g", "2.0g"], packs: ["1瓶/盒", "10瓶/盒"] },
  granule: { specs: ["3g", "5g", "10g", "0.125g", "每袋装6g"], packs: ["6袋/盒", "9袋/盒", "10袋/盒", "12袋/盒"] },
  liquid: {
    specs: ["10ml", "每支装10ml", "60ml:1.2g", "100ml:2g", "150ml"],
    packs: ["60ml/瓶", "100ml/瓶", "150ml/瓶", "10ml×6支/盒", "10ml×10支/盒"],
  },
  eye: { specs: ["5ml:15mg", "5ml:25mg", "8ml:24mg", "0.4ml:1.2mg"], packs: ["1支/盒", "5ml/支", "10支/盒"] },
  topical: { specs: ["10g:10mg", "15g:0.15g", "20g:0.2g", "0.1%", "1%"], packs: ["10g/支", "15g/支", "20g/支"] },
  inhaler: { specs: ["每揿100μg", "每喷50μg", "200揿", "120喷"], packs: ["1瓶/盒", "1支/盒"] },
  suppository: { specs: ["0.2g", "0.5g", "1.5g"], packs: ["6粒/盒", "10粒/盒"] },
  pill: {
    specs: ["每丸重9g", "每丸重27mg", "每8丸相当于原生药3g", "每袋装6g"],
    packs: ["10丸/盒", "60丸/瓶", "180丸/瓶", "10袋/盒"],
  },
  patch: { specs: ["7cm×10cm", "5cm×7cm", "4.2mg"], packs: ["4贴/盒", "6贴/盒", "10贴/盒"] },
};

/** drug_product_class rows (integer ids in the platform, 1…), and the letter of their approval numbers. */
export const PRODUCT_CLASSES: { name: string; letter: "H" | "Z" | "S" }[] = [
  { name: "化学药品", letter: "H" },
  { name: "中成药", letter: "Z" },
  { name: "生物制品", letter: "S" },
  { name: "抗生素", letter: "H" },
  { name: "疫苗", letter: "S" },
  { name: "血液制品", letter: "S" },
  { name: "精神药品", letter: "H" },
  { name: "麻醉药品", letter: "H" },
  { name: "中药饮片", letter: "Z" },
  { name: "放射性药品", letter: "H" },
  { name: "体外诊断试剂", letter: "S" },
];

export interface DrugSubclass {
  name: string;
  systems: SystemId[];
  /** A PRODUCT_CLASSES name. */
  productClass: string;
  /** Dosage forms its products come in (DOSAGE_FORMS names); ignored for drugs that name their own form. */
  forms: string[];
  /**
   * "中文名:English": a chemical or biological drug, made in this subclass's forms;
   * "中文名:Pinyin:剂型": a proprietary Chinese medicine whose name already holds its one form.
   */
  drugs: string[];
}

/** The use classification: level-1 classes and their level-2 subclasses (is_a_level links sub → parent). */
export const DRUG_CLASSES: { name: string; subclasses: DrugSubclass[] }[] = [
  {
    name: "抗感染药",
    subclasses: [
      {
        name: "青霉素类",
        systems: ["infect", "resp", "ent"],
        productClass: "抗生素",
        forms: ["胶囊", "片剂", "分散片", "颗粒剂", "注射用无菌粉末"],
        drugs: [
          "阿莫西林:Amoxicillin",
          "阿莫西林克拉维酸钾:Amoxicillin and Clavulanate Potassium",
          "青霉素钠:Benzylpenicillin Sodium",
          "哌拉西林钠他唑巴坦钠:Piperacillin Sodium and Tazobactam Sodium",
          "氨苄西林钠:Ampicillin Sodium",
        ],
      },
      {
        name: "头孢菌素类",
        systems: ["infect", "resp", "renal"],
        productClass: "抗生素",
        forms: ["胶囊", "片剂", "分散片", "颗粒剂", "注射用无菌粉末"],
        drugs: [
          "头孢克肟:Cefixime",
          "头孢呋辛酯:Cefuroxime Axetil",
          "头孢曲松钠:Ceftriaxone Sodium",
          "头孢拉定:Cefradine",
          "头孢克洛:Cefaclor",
          "头孢他啶:Ceftazidime",
        ],
      },
      {
        name: "大环内酯类",
        systems: ["infect", "resp", "peds"],
        productClass: "抗生素",
        forms: ["片剂", "胶囊", "颗粒剂", "注射用无菌粉末", "混悬液"],
        drugs: ["阿奇霉素:Azithromycin", "克拉霉素:Clarithromycin", "红霉素:Erythromycin", "罗红霉素:Roxithromycin"],
      },
      {
        name: "喹诺酮类",
        systems: ["infect", "renal", "digest"],
        productClass: "化学药品",
        forms: ["片剂", "胶囊", "注射剂", "滴眼液"],
        drugs: ["左氧氟沙星:Levofloxacin", "莫西沙星:Moxifloxacin", "环丙沙星:Ciprofloxacin", "诺氟沙星:Norfloxacin"],
      },
      {
        name: "抗病毒药",
        systems: ["infect", "resp", "skin"],
        productClass: "化学药品",
        forms: ["片剂", "胶囊", "颗粒剂", "注射用无菌粉末", "乳膏剂"],
        drugs: [
          "奥司他韦:Oseltamivir",
          "阿昔洛韦:Aciclovir",
          "恩替卡韦:Entecavir",
          "利巴韦林:Ribavirin",
          "更昔洛韦:Ganciclovir",
          "富马酸替诺福韦二吡呋酯:Tenofovir Disoproxil Fumarate",
        ],
      },
      {
        name: "抗真菌药",
        systems: ["infect", "skin", "obgyn"],
        productClass: "化学药品",
        forms: ["胶囊", "片剂", "乳膏剂", "注射剂"],
        drugs: ["氟康唑:Fluconazole", "伊曲康唑:Itraconazole", "特比萘芬:Terbinafine", "制霉菌素:Nystatin"],
      },
      {
        name: "抗结核药",
        systems: ["infect", "resp"],
        productClass: "化学药品",
        forms: ["片剂", "胶囊", "注射剂"],
        drugs: [
          "异烟肼:Isoniazid",
          "利福平:Rifampicin",
          "盐酸乙胺丁醇:Ethambutol Hydrochloride",
          "吡嗪酰胺:Pyrazinamide",
        ],
      },
    ],
  },
  {
    name: "呼吸系统用药",
    subclasses: [
      {
        name: "镇咳祛痰药",
        systems: ["resp", "peds"],
        productClass: "化学药品",
        forms: ["片剂", "口服溶液", "糖浆剂", "颗粒剂", "注射剂"],
        drugs: [
          "盐酸氨溴索:Ambroxol Hydrochloride",
          "氢溴酸右美沙芬:Dextromethorphan Hydrobromide",
          "乙酰半胱氨酸:Acetylcysteine",
          "羧甲司坦:Carbocisteine",
          "盐酸溴己新:Bromhexine Hydrochloride",
        ],
      },
      {
        name: "平喘药",
        systems: ["resp"],
        productClass: "化学药品",
        forms: ["气雾剂", "吸入粉雾剂", "片剂", "缓释片"],
        drugs: [
          "硫酸沙丁胺醇:Salbutamol Sulfate",
          "茶碱:Theophylline",
          "孟鲁司特钠:Montelukast Sodium",
          "布地奈德:Budesonide",
          "噻托溴铵:Tiotropium Bromide",
          "沙美特罗替卡松:Salmeterol and Fluticasone Propionate",
        ],
      },
    ],
  },
  {
    name: "心血管系统用药",
    subclasses: [
      {
        name: "抗高血压药",
        systems: ["cardio", "renal"],
        productClass: "化学药品",
        forms: ["片剂", "缓释片", "分散片", "胶囊"],
        drugs: [
          "苯磺酸氨氯地平:Amlodipine Besylate",
          "硝苯地平:Nifedipine",
          "缬沙坦:Valsartan",
          "厄贝沙坦:Irbesartan",
          "氯沙坦钾:Losartan Potassium",
          "马来酸依那普利:Enalapril Maleate",
          "盐酸贝那普利:Benazepril Hydrochloride",
          "酒石酸美托洛尔:Metoprolol Tartrate",
          "富马酸比索洛尔:Bisoprolol Fumarate",
          "氢氯噻嗪:Hydrochlorothiazide",
        ],
      },
      {
        name: "调血脂药",
        systems: ["cardio", "endo"],
        productClass: "化学药品",
        forms: ["片剂", "胶囊", "分散片"],
        drugs: [
          "阿托伐他汀钙:Atorvastatin Calcium",
          "瑞舒伐他汀钙:Rosuvastatin Calcium",
          "辛伐他汀:Simvastatin",
          "非诺贝特:Fenofibrate",
          "依折麦布:Ezetimibe",
        ],
      },
      {
        name: "抗心绞痛药",
        systems: ["cardio"],
        productClass: "化学药品",
        forms: ["片剂", "缓释片", "注射剂", "气雾剂"],
        drugs: [
          "硝酸甘油:Nitroglycerin",
          "单硝酸异山梨酯:Isosorbide Mononitrate",
          "盐酸曲美他嗪:Trimetazidine Dihydrochloride",
        ],
      },
      {
        name: "抗心律失常药",
        systems: ["cardio"],
        productClass: "化学药品",
        forms: ["片剂", "注射剂"],
        drugs: ["盐酸胺碘酮:Amiodarone Hydrochloride", "盐酸普罗帕酮:Propafenone Hydrochloride"],
      },
      {
        name: "抗心力衰竭药",
        systems: ["cardio", "renal"],
        productClass: "化学药品",
        forms: ["片剂", "注射剂"],
        drugs: [
          "地高辛:Digoxin",
          "螺内酯:Spironolactone",
          "呋塞米:Furosemide",
          "沙库巴曲缬沙坦钠:Sacubitril Valsartan Sodium",
        ],
      },
    ],
  },
  {
    name: "血液系统用药",
    subclasses: [
      {
        name: "抗血小板药",
        systems: ["cardio", "neuro", "blood"],
        productClass: "化学药品",
        forms: ["肠溶片", "片剂"],
        drugs: ["阿司匹林:Aspirin", "硫酸氢氯吡格雷:Clopidogrel Bisulfate", "替格瑞洛:Ticagrelor"],
      },
      {
        name: "抗凝药",
        systems: ["cardio", "blood", "neuro"],
        productClass: "化学药品",
        forms: ["片剂", "注射剂", "胶囊"],
        drugs: [
          "华法林钠:Warfarin Sodium",
          "利伐沙班:Rivaroxaban",
          "达比加群酯:Dabigatran Etexilate",
          "依诺肝素钠:Enoxaparin Sodium",
        ],
      },
      {
        name: "抗贫血药",
        systems: ["blood", "renal", "obgyn"],
        productClass: "化学药品",
        forms: ["片剂", "缓释片", "注射剂", "口服溶液"],
        drugs: [
          "硫酸亚铁:Ferrous Sulfate",
          "叶酸:Folic Acid",
          "蔗糖铁:Iron Sucrose",
          "多糖铁复合物:Iron Polysaccharide Complex",
        ],
      },
      {
        name: "促造血生长因子",
        systems: ["blood", "renal", "tumor"],
        productClass: "生物制品",
        forms: ["注射剂", "注射用无菌粉末"],
        drugs: [
          "重组人促红素:Recombinant Human Erythropoietin",
          "重组人粒细胞刺激因子:Recombinant Human Granulocyte Colony-stimulating Factor",
          "重组人血小板生成素:Recombinant Human Thrombopoietin",
        ],
      },
    ],
  },
  {
    name: "消化系统用药",
    subclasses: [
      {
        name: "抑酸药",
        systems: ["digest"],
        productClass: "化学药品",
        forms: ["肠溶胶囊", "肠溶片", "注射用无菌粉末"],
        drugs: [
          "奥美拉唑:Omeprazole",
          "雷贝拉唑钠:Rabeprazole Sodium",
          "泮托拉唑钠:Pantoprazole Sodium",
          "埃索美拉唑镁:Esomeprazole Magnesium",
          "法莫替丁:Famotidine",
        ],
      },
      {
        name: "胃肠动力药",
        systems: ["digest"],
        productClass: "化学药品",
        forms: ["片剂", "分散片", "胶囊"],
        drugs: ["多潘立酮:Domperidone", "枸橼酸莫沙必利:Mosapride Citrate", "盐酸伊托必利:Itopride Hydrochloride"],
      },
      {
        name: "胃黏膜保护药",
        systems: ["digest"],
        productClass: "化学药品",
        forms: ["片剂", "胶囊", "混悬液", "颗粒剂"],
        drugs: [
          "铝碳酸镁:Hydrotalcite",
          "硫糖铝:Sucralfate",
          "枸橼酸铋钾:Bismuth Potassium Citrate",
          "瑞巴派特:Rebamipide",
        ],
      },
      {
        name: "止泻及通便药",
        systems: ["digest", "peds"],
        productClass: "化学药品",
        forms: ["散剂", "胶囊", "口服溶液", "颗粒剂"],
        drugs: [
          "蒙脱石:Smectite",
          "盐酸洛哌丁胺:Loperamide Hydrochloride",
          "乳果糖:Lactulose",
          "聚乙二醇4000:Macrogol 4000",
          "口服补液盐Ⅲ:Oral Rehydration Salts III",
        ],
      },
      {
        name: "微生态制剂",
        systems: ["digest", "peds"],
        productClass: "生物制品",
        forms: ["胶囊", "散剂", "片剂"],
        drugs: [
          "双歧杆菌三联活菌:Live Combined Bifidobacterium, Lactobacillus and Enterococcus",
          "枯草杆菌二联活菌:Combined Bacillus Subtilis and Enterococcus Faecium",
          "布拉氏酵母菌:Saccharomyces Boulardii",
        ],
      },
      {
        name: "肝胆用药",
        systems: ["digest", "infect"],
        productClass: "化学药品",
        forms: ["胶囊", "片剂", "注射剂"],
        drugs: [
          "熊去氧胆酸:Ursodeoxycholic Acid",
          "多烯磷脂酰胆碱:Polyene Phosphatidylcholine",
          "水飞蓟宾:Silibinin",
          "甘草酸二铵:Diammonium Glycyrrhizinate",
          "双环醇:Bicyclol",
        ],
      },
    ],
  },
  {
    name: "神经系统用药",
    subclasses: [
      {
        name: "抗癫痫药",
        systems: ["neuro", "peds"],
        productClass: "化学药品",
        forms: ["片剂", "缓释片", "口服溶液"],
        drugs: [
          "丙戊酸钠:Sodium Valproate",
          "卡马西平:Carbamazepine",
          "左乙拉西坦:Levetiracetam",
          "拉莫三嗪:Lamotrigine",
          "奥卡西平:Oxcarbazepine",
        ],
      },
      {
        name: "抗帕金森病药",
        systems: ["neuro"],
        productClass: "化学药品",
        forms: ["片剂", "缓释片"],
        drugs: ["多巴丝肼:Levodopa and Benserazide Hydrochloride", "盐酸普拉克索:Pramipexole Dihydrochloride"],
      },
      {
        name: "抗痴呆药",
        systems: ["neuro", "psych"],
        productClass: "化学药品",
        forms: ["片剂", "口服溶液"],
        drugs: ["盐酸多奈哌齐:Donepezil Hydrochloride", "盐酸美金刚:Memantine Hydrochloride"],
      },
      {
        name: "脑血管及改善循环药",
        systems: ["neuro", "ent"],
        productClass: "化学药品",
        forms: ["片剂", "胶囊", "软胶囊", "注射剂"],
        drugs: [
          "尼莫地平:Nimodipine",
          "丁苯酞:Butylphthalide",
          "甲钴胺:Mecobalamin",
          "甲磺酸倍他司汀:Betahistine Mesilate",
          "盐酸氟桂利嗪:Flunarizine Hydrochloride",
        ],
      },
      {
        name: "镇痛药",
        systems: ["tumor", "ortho", "neuro"],
        productClass: "麻醉药品",
        forms: ["缓释片", "注射剂", "贴剂"],
        drugs: [
          "硫酸吗啡:Morphine Sulfate",
          "盐酸羟考酮:Oxycodone Hydrochloride",
          "芬太尼:Fentanyl",
          "盐酸曲马多:Tramadol Hydrochloride",
        ],
      },
    ],
  },
  {
    name: "精神类药物",
    subclasses: [
      {
        name: "抗抑郁药",
        systems: ["psych"],
        productClass: "化学药品",
        forms: ["片剂", "胶囊", "分散片"],
        drugs: [
          "盐酸舍曲林:Sertraline Hydrochloride",
          "盐酸帕罗西汀:Paroxetine Hydrochloride",
          "盐酸氟西汀:Fluoxetine Hydrochloride",
          "草酸艾司西酞普兰:Escitalopram Oxalate",
          "盐酸文拉法辛:Venlafaxine Hydrochloride",
        ],
      },
      {
        name: "抗精神病药",
        systems: ["psych"],
        productClass: "化学药品",
        forms: ["片剂", "口服溶液", "注射剂"],
        drugs: ["奥氮平:Olanzapine", "利培酮:Risperidone", "富马酸喹硫平:Quetiapine Fumarate", "阿立哌唑:Aripiprazole"],
      },
      {
        name: "镇静催眠药",
        systems: ["psych", "neuro"],
        productClass: "精神药品",
        forms: ["片剂"],
        drugs: ["艾司唑仑:Estazolam", "阿普唑仑:Alprazolam", "佐匹克隆:Zopiclone", "右佐匹克隆:Eszopiclone"],
      },
    ],
  },
  {
    name: "内分泌及代谢用药",
    subclasses: [
      {
        name: "口服降糖药",
        systems: ["endo"],
        productClass: "化学药品",
        forms: ["片剂", "缓释片", "胶囊"],
        drugs: [
          "盐酸二甲双胍:Metformin Hydrochloride",
          "格列美脲:Glimepiride",
          "阿卡波糖:Acarbose",
          "磷酸西格列汀:Sitagliptin Phosphate",
          "达格列净:Dapagliflozin",
        ],
      },
      {
        name: "胰岛素及类似物",
        systems: ["endo", "obgyn"],
        productClass: "生物制品",
        forms: ["注射剂"],
        drugs: [
          "精蛋白生物合成人胰岛素:Isophane Protamine Biosynthetic Human Insulin",
          "甘精胰岛素:Insulin Glargine",
          "门冬胰岛素:Insulin Aspart",
          "利拉鲁肽:Liraglutide",
        ],
      },
      {
        name: "甲状腺疾病用药",
        systems: ["endo"],
        productClass: "化学药品",
        forms: ["片剂"],
        drugs: ["左甲状腺素钠:Levothyroxine Sodium", "甲巯咪唑:Thiamazole", "丙硫氧嘧啶:Propylthiouracil"],
      },
      {
        name: "抗痛风药",
        systems: ["endo", "rheum"],
        productClass: "化学药品",
        forms: ["片剂", "缓释胶囊"],
        drugs: ["别嘌醇:Allopurinol", "非布司他:Febuxostat", "秋水仙碱:Colchicine", "苯溴马隆:Benzbromarone"],
      },
      {
        name: "骨代谢调节药",
        systems: ["endo", "ortho"],
        productClass: "化学药品",
        forms: ["片剂", "软胶囊", "注射剂"],
        drugs: [
          "阿仑膦酸钠:Alendronate Sodium",
          "骨化三醇:Calcitriol",
          "碳酸钙D3:Calcium Carbonate and Vitamin D3",
          "唑来膦酸:Zoledronic Acid",
        ],
      },
      {
        name: "糖皮质激素",
        systems: ["endo", "rheum", "resp", "skin"],
        productClass: "化学药品",
        forms: ["片剂", "注射剂", "注射用无菌粉末", "乳膏剂"],
        drugs: [
          "醋酸泼尼松:Prednisone Acetate",
          "甲泼尼龙:Methylprednisolone",
          "地塞米松磷酸钠:Dexamethasone Sodium Phosphate",
          "氢化可的松:Hydrocortisone",
        ],
      },
    ],
  },
  {
    name: "泌尿系统用药",
    subclasses: [
      {
        name: "前列腺疾病用药",
        systems: ["renal"],
        productClass: "化学药品",
        forms: ["缓释胶囊", "片剂", "胶囊"],
        drugs: [
          "盐酸坦索罗辛:Tamsulosin Hydrochloride",
          "非那雄胺:Finasteride",
          "盐酸特拉唑嗪:Terazosin Hydrochloride",
        ],
      },
      {
        name: "肾病用药",
        systems: ["renal"],
        productClass: "化学药品",
        forms: ["片剂", "胶囊"],
        drugs: [
          "复方α-酮酸:Compound α-Ketoacid",
          "碳酸氢钠:Sodium Bicarbonate",
          "托拉塞米:Torasemide",
          "碳酸司维拉姆:Sevelamer Carbonate",
        ],
      },
    ],
  },
  {
    name: "解热镇痛抗炎药",
    subclasses: [
      {
        name: "非甾体抗炎药",
        systems: ["ortho", "rheum", "infect", "resp", "peds"],
        productClass: "化学药品",
        forms: ["片剂", "缓释胶囊", "混悬液", "颗粒剂", "凝胶剂", "缓释片"],
        drugs: [
          "布洛芬:Ibuprofen",
          "对乙酰氨基酚:Paracetamol",
          "双氯芬酸钠:Diclofenac Sodium",
          "塞来昔布:Celecoxib",
          "洛索洛芬钠:Loxoprofen Sodium",
          "美洛昔康:Meloxicam",
        ],
      },
      {
        name: "抗风湿药",
        systems: ["rheum"],
        productClass: "化学药品",
        forms: ["片剂", "肠溶片"],
        drugs: [
          "甲氨蝶呤:Methotrexate",
          "来氟米特:Leflunomide",
          "硫酸羟氯喹:Hydroxychloroquine Sulfate",
          "柳氮磺吡啶:Sulfasalazine",
          "艾拉莫德:Iguratimod",
        ],
      },
      {
        name: "抗过敏药",
        systems: ["skin", "ent", "resp"],
        productClass: "化学药品",
        forms: ["片剂", "胶囊", "糖浆剂", "滴剂"],
        drugs: [
          "氯雷他定:Loratadine",
          "盐酸西替利嗪:Cetirizine Hydrochloride",
          "依巴斯汀:Ebastine",
          "马来酸氯苯那敏:Chlorphenamine Maleate",
          "地氯雷他定:Desloratadine",
        ],
      },
    ],
  },
  {
    name: "抗肿瘤药",
    subclasses: [
      {
        name: "细胞毒类抗肿瘤药",
        systems: ["tumor", "blood"],
        productClass: "化学药品",
        forms: ["注射剂", "注射用无菌粉末", "片剂"],
        drugs: [
          "紫杉醇:Paclitaxel",
          "顺铂:Cisplatin",
          "奥沙利铂:Oxaliplatin",
          "卡培他滨:Capecitabine",
          "盐酸吉西他滨:Gemcitabine Hydrochloride",
        ],
      },
      {
        name: "靶向抗肿瘤药",
        systems: ["tumor", "blood"],
        productClass: "化学药品",
        forms: ["片剂", "胶囊"],
        drugs: [
          "吉非替尼:Gefitinib",
          "盐酸埃克替尼:Icotinib Hydrochloride",
          "甲磺酸伊马替尼:Imatinib Mesylate",
          "甲磺酸奥希替尼:Osimertinib Mesylate",
        ],
      },
      {
        name: "单克隆抗体",
        systems: ["tumor", "rheum"],
        productClass: "生物制品",
        forms: ["注射剂", "注射用无菌粉末"],
        drugs: ["贝伐珠单抗:Bevacizumab", "曲妥珠单抗:Trastuzumab", "信迪利单抗:Sintilimab", "阿达木单抗:Adalimumab"],
      },
      {
        name: "内分泌治疗药",
        systems: ["tumor", "obgyn"],
        productClass: "化学药品",
        forms: ["片剂"],
        drugs: [
          "枸橼酸他莫昔芬:Tamoxifen Citrate",
          "来曲唑:Letrozole",
          "比卡鲁胺:Bicalutamide",
          "阿那曲唑:Anastrozole",
        ],
      },
    ],
  },
  {
    name: "五官及皮肤科用药",
    subclasses: [
      {
        name: "皮肤科外用药",
        systems: ["skin"],
        productClass: "化学药品",
        forms: ["乳膏剂", "软膏剂", "凝胶剂"],
        drugs: [
          "糠酸莫米松:Mometasone Furoate",
          "阿达帕林:Adapalene",
          "夫西地酸:Fusidic Acid",
          "联苯苄唑:Bifonazole",
          "他克莫司:Tacrolimus",
          "卡泊三醇:Calcipotriol",
        ],
      },
      {
        name: "眼科用药",
        systems: ["eye"],
        productClass: "化学药品",
        forms: ["滴眼液"],
        drugs: [
          "玻璃酸钠:Sodium Hyaluronate",
          "妥布霉素地塞米松:Tobramycin and Dexamethasone",
          "拉坦前列素:Latanoprost",
          "硫酸阿托品:Atropine Sulfate",
          "盐酸卡替洛尔:Carteolol Hydrochloride",
          "普拉洛芬:Pranoprofen",
        ],
      },
      {
        name: "耳鼻喉及口腔科用药",
        systems: ["ent", "oral"],
        productClass: "化学药品",
        forms: ["鼻喷雾剂", "含片", "含漱液", "滴剂"],
        drugs: [
          "丙酸氟替卡松:Fluticasone Propionate",
          "盐酸羟甲唑啉:Oxymetazoline Hydrochloride",
          "西地碘:Cydiodine",
          "葡萄糖酸氯己定:Chlorhexidine Gluconate",
          "氧氟沙星:Ofloxacin",
        ],
      },
    ],
  },
  {
    name: "妇产科用药",
    subclasses: [
      {
        name: "性激素及调节药",
        systems: ["obgyn"],
        productClass: "化学药品",
        forms: ["片剂", "软胶囊", "注射剂"],
        drugs: [
          "黄体酮:Progesterone",
          "地屈孕酮:Dydrogesterone",
          "米非司酮:Mifepristone",
          "戊酸雌二醇:Estradiol Valerate",
          "缩宫素:Oxytocin",
        ],
      },
      {
        name: "阴道用抗感染药",
        systems: ["obgyn"],
        productClass: "化学药品",
        forms: ["栓剂", "阴道片", "凝胶剂"],
        drugs: ["甲硝唑:Metronidazole", "克霉唑:Clotrimazole", "硝呋太尔制霉素:Nifuratel and Nysfungin"],
      },
    ],
  },
  {
    name: "维生素及矿物质",
    subclasses: [
      {
        name: "维生素类",
        systems: ["endo", "peds", "blood"],
        productClass: "化学药品",
        forms: ["片剂", "软胶囊", "滴剂", "注射剂"],
        drugs: [
          "维生素C:Vitamin C",
          "维生素B1:Vitamin B1",
          "维生素AD:Vitamin A and D",
          "维生素D3:Vitamin D3",
          "复合维生素B:Compound Vitamin B",
        ],
      },
      {
        name: "矿物质类",
        systems: ["peds", "endo", "ortho"],
        productClass: "化学药品",
        forms: ["口服溶液", "片剂", "颗粒剂"],
        drugs: ["葡萄糖酸钙:Calcium Gluconate", "葡萄糖酸锌:Zinc Gluconate", "碳酸钙:Calcium Carbonate"],
      },
    ],
  },
  {
    name: "免疫调节及预防用生物制品",
    subclasses: [
      {
        name: "疫苗",
        systems: ["infect", "peds"],
        productClass: "疫苗",
        forms: ["注射剂"],
        drugs: [
          "重组乙型肝炎疫苗:Recombinant Hepatitis B Vaccine",
          "流感病毒裂解疫苗:Influenza Vaccine (Split Virion)",
          "水痘减毒活疫苗:Varicella Vaccine, Live",
          "23价肺炎球菌多糖疫苗:23-valent Pneumococcal Polysaccharide Vaccine",
          "人用狂犬病疫苗:Rabies Vaccine for Human Use",
        ],
      },
      {
        name: "血液制品",
        systems: ["blood", "infect"],
        productClass: "血液制品",
        forms: ["注射剂"],
        drugs: [
          "人血白蛋白:Human Albumin",
          "静注人免疫球蛋白:Human Immunoglobulin for Intravenous Injection",
          "人凝血因子Ⅷ:Human Coagulation Factor VIII",
        ],
      },
      {
        name: "免疫调节剂",
        systems: ["infect", "tumor", "skin"],
        productClass: "生物制品",
        forms: ["注射用无菌粉末", "注射剂"],
        drugs: ["重组人干扰素α2b:Recombinant Human Interferon α2b", "胸腺法新:Thymalfasin"],
      },
    ],
  },
  {
    name: "中成药",
    subclasses: [
      {
        name: "清热解毒剂",
        systems: ["infect", "resp", "ent"],
        productClass: "中成药",
        forms: [],
        drugs: [
          "板蓝根颗粒:Banlangen Keli:颗粒剂",
          "双黄连口服液:Shuanghuanglian Koufuye:口服液",
          "连花清瘟胶囊:Lianhua Qingwen Jiaonang:胶囊",
          "蒲地蓝消炎口服液:Pudilan Xiaoyan Koufuye:口服液",
          "银黄颗粒:Yinhuang Keli:颗粒剂",
          "牛黄解毒片:Niuhuang Jiedu Pian:片剂",
        ],
      },
      {
        name: "解表剂",
        systems: ["resp", "infect", "digest"],
        productClass: "中成药",
        forms: [],
        drugs: [
          "感冒灵颗粒:Ganmaoling Keli:颗粒剂",
          "小柴胡颗粒:Xiaochaihu Keli:颗粒剂",
          "藿香正气水:Huoxiang Zhengqi Shui:酊剂",
          "银翘解毒片:Yinqiao Jiedu Pian:片剂",
          "风寒感冒颗粒:Fenghan Ganmao Keli:颗粒剂",
        ],
      },
      {
        name: "止咳化痰剂",
        systems: ["resp", "peds"],
        productClass: "中成药",
        forms: [],
        drugs: [
          "急支糖浆:Jizhi Tangjiang:糖浆剂",
          "蜜炼川贝枇杷膏:Milian Chuanbei Pipa Gao:煎膏剂",
          "复方鲜竹沥液:Fufang Xianzhuli Ye:口服液",
          "苏黄止咳胶囊:Suhuang Zhike Jiaonang:胶囊",
          "小儿肺热咳喘口服液:Xiao'er Feire Kechuan Koufuye:口服液",
        ],
      },
      {
        name: "活血化瘀剂",
        systems: ["cardio", "neuro"],
        productClass: "中成药",
        forms: [],
        drugs: [
          "复方丹参滴丸:Fufang Danshen Diwan:滴丸剂",
          "速效救心丸:Suxiao Jiuxin Wan:滴丸剂",
          "血塞通软胶囊:Xuesaitong Ruanjiaonang:软胶囊",
          "麝香保心丸:Shexiang Baoxin Wan:丸剂",
          "通心络胶囊:Tongxinluo Jiaonang:胶囊",
        ],
      },
      {
        name: "补益剂",
        systems: ["endo", "renal", "obgyn", "blood"],
        productClass: "中成药",
        forms: [],
        drugs: [
          "六味地黄丸:Liuwei Dihuang Wan:丸剂",
          "金匮肾气丸:Jingui Shenqi Wan:丸剂",
          "补中益气丸:Buzhong Yiqi Wan:丸剂",
          "归脾丸:Guipi Wan:丸剂",
          "乌鸡白凤丸:Wuji Baifeng Wan:丸剂",
          "复方阿胶浆:Fufang Ejiao Jiang:口服液",
        ],
      },
      {
        name: "消导和胃剂",
        systems: ["digest", "peds"],
        productClass: "中成药",
        forms: [],
        drugs: [
          "三九胃泰颗粒:Sanjiu Weitai Keli:颗粒剂",
          "保和丸:Baohe Wan:丸剂",
          "气滞胃痛颗粒:Qizhi Weitong Keli:颗粒剂",
          "健胃消食片:Jianwei Xiaoshi Pian:片剂",
          "小儿七星茶颗粒:Xiao'er Qixingcha Keli:颗粒剂",
        ],
      },
      {
        name: "祛风湿及骨伤剂",
        systems: ["ortho", "rheum"],
        productClass: "中成药",
        forms: [],
        drugs: [
          "云南白药胶囊:Yunnan Baiyao Jiaonang:胶囊",
          "独活寄生合剂:Duhuo Jisheng Heji:合剂",
          "麝香壮骨膏:Shexiang Zhuanggu Gao:贴膏剂",
          "仙灵骨葆胶囊:Xianling Gubao Jiaonang:胶囊",
          "颈舒颗粒:Jingshu Keli:颗粒剂",
        ],
      },
      {
        name: "安神解郁剂",
        systems: ["psych", "neuro"],
        productClass: "中成药",
        forms: [],
        drugs: [
          "天王补心丸:Tianwang Buxin Wan:丸剂",
          "枣仁安神胶囊:Zaoren Anshen Jiaonang:胶囊",
          "舒肝解郁胶囊:Shugan Jieyu Jiaonang:胶囊",
          "百乐眠胶囊:Bailemian Jiaonang:胶囊",
        ],
      },
      {
        name: "妇科调经剂",
        systems: ["obgyn"],
        productClass: "中成药",
        forms: [],
        drugs: [
          "益母草颗粒:Yimucao Keli:颗粒剂",
          "桂枝茯苓胶囊:Guizhi Fuling Jiaonang:胶囊",
          "逍遥丸:Xiaoyao Wan:丸剂",
          "妇科千金片:Fuke Qianjin Pian:片剂",
        ],
      },
      {
        name: "外用及五官科中成药",
        systems: ["skin", "ent", "oral", "eye"],
        productClass: "中成药",
        forms: [],
        drugs: [
          "京万红软膏:Jingwanhong Ruangao:软膏剂",
          "马应龙麝香痔疮膏:Mayinglong Shexiang Zhichuang Gao:软膏剂",
          "鼻炎康片:Biyankang Pian:片剂",
          "西瓜霜润喉片:Xiguashuang Runhou Pian:含片",
          "明目地黄丸:Mingmu Dihuang Wan:丸剂",
        ],
      },
    ],
  },
];

export interface ExecutiveStandard {
  name: string;
  volume: string;
  /** The supervision unit that issues it (comly_with links a product to it). */
  issuer: string;
  /** Product classes made to it. */
  productClasses: string[];
  /** First year products may be approved under it (a pharmacopoeia edition applies from its year). */
  fromYear: number;
  /** Until (included). */
  toYear: number;
  /** How its standard numbers look; see build.ts. */
  numbering: "chp" | "ws1" | "ws3" | "ybh" | "ybs" | "jx";
}

const CHEMICAL = ["化学药品", "抗生素", "精神药品", "麻醉药品"];
const BIOLOGICAL = ["生物制品", "疫苗", "血液制品"];
const CHINESE = ["中成药"];

export const EXECUTIVE_STANDARDS: ExecutiveStandard[] = [
  ...(
    [
      [2015, 2019],
      [2020, 2024],
      [2025, 2026],
    ] as const
  ).flatMap(([edition, to]) =>
    (
      [
        ["一部", CHINESE],
        ["二部", CHEMICAL],
        ["三部", BIOLOGICAL],
      ] as const
    ).map(
      ([volume, productClasses]): ExecutiveStandard => ({
        name: `《中国药典》${edition}年版`,
        volume,
        issuer: "国家药典委员会",
        productClasses: [...productClasses],
        fromYear: edition,
        toYear: to,
        numbering: "chp",
      }),
    ),
  ),
  {
    name: "国家药品标准化学药品地标升国家标准",
    volume: "第十六册",
    issuer: "国家药品监督管理局",
    productClasses: CHEMICAL,
    fromYear: 2015,
    toYear: 2026,
    numbering: "ws1",
  },
  {
    name: "国家药品标准新药转正标准",
    volume: "第七十五册",
    issuer: "国家药品监督管理局",
    productClasses: CHEMICAL,
    fromYear: 2015,
    toYear: 2026,
    numbering: "ws1",
  },
  {
    name: "卫生部药品标准中药成方制剂",
    volume: "第十册",
    issuer: "国家卫生健康委员会",
    productClasses: CHINESE,
    fromYear: 2015,
    toYear: 2026,
    numbering: "ws3",
  },
  {
    name: "卫生部药品标准中药成方制剂",
    volume: "第二十册",
    issuer: "国家卫生健康委员会",
    productClasses: CHINESE,
    fromYear: 2015,
    toYear: 2026,
    numbering: "ws3",
  },
  {
    name: "国家药品监督管理局药品注册标准",
    volume: "化学药品",
    issuer: "国家药品监督管理局药品审评中心",
    productClasses: CHEMICAL,
    fromYear: 2015,
    toYear: 2026,
    numbering: "ybh",
  },
  {
    name: "国家药品监督管理局药品注册标准",
    volume: "生物制品",
    issuer: "国家药品监督管理局药品审评中心",
    productClasses: BIOLOGICAL,
    fromYear: 2015,
    toYear: 2026,
    numbering: "ybs",
  },
  {
    name: "进口药品注册标准",
    volume: "2020年版",
    issuer: "中国食品药品检定研究院",
    productClasses: [...CHEMICAL, ...BIOLOGICAL],
    fromYear: 2015,
    toYear: 2026,
    numbering: "jx",
  },
];
