import type { Json } from "../../src/core/json";
import { CONCEPT_GROUPS, MCP_SERVERS, METRIC_DEFINITIONS, skillCatalog, TOOL_BOXES } from "./agent-tools";
import { isoDate, metricMonths, monthIndex, pad } from "./calendar";
import {
  BRAND_CHARACTERS,
  CITIES,
  type City,
  COMPANY_SUFFIXES,
  NATIONAL_UNITS,
  provinceShortName,
  provinceUnit,
  ROADS,
} from "./company-vocabulary";
import { type DiseaseSeed, diseaseProperties } from "./disease-properties";
import { DOSAGE_FORMS, DRUG_CLASSES, EXECUTIVE_STANDARDS, PRODUCT_CLASSES } from "./drug-vocabulary";
import { FIXED_DISEASES, FIXED_IDS, FORBIDDEN_NAMES } from "./hard-cases";
import {
  checkVariants,
  derivedAliases,
  diseaseVariants,
  drugVariants,
  expandNames,
  facilityVariants,
  symptomVariants,
} from "./names";
import { type DrugEntry, type DrugSeed, type Product, ProductMaker } from "./products";
import { Random } from "./random";
import { ACTION_TYPES, APPROVED_DRUG_COUNT_METRIC, KNOWLEDGE_NETWORK, OBJECT_TYPES, RELATION_TYPES } from "./schema";
import {
  COMPLICATIONS,
  DEPARTMENT_TREE,
  FACILITIES,
  GENERAL_CHECKS,
  GENERAL_SYMPTOMS,
  SIDE_DEPARTMENTS,
  SYSTEMS,
  type SystemId,
  type SystemVocabulary,
} from "./vocabulary";

/**
 * Builds the kn_medical bundle: the exported schema, instances drawn from the
 * word lists with a seeded PRNG, explicit relation pairs and the company metric
 * series computed from the products' approval dates. Without a scale it is the
 * committed sample (every hand-written name once); with a scale it adds
 * combinatorial variants until the bundle holds that many instances.
 */

/** The seed of the committed sample (the day of the real call samples). */
export const DEFAULT_SEED = 20251127;

export interface GenerateOptions {
  seed?: number;
  /** About this many instances in total; absent for the sample. */
  scale?: number;
}

export type InstanceKey = string | number;
export type Row = Record<string, Json>;
export type Series = [number, number][];

export interface GeneratedBundle {
  knowledge_network: typeof KNOWLEDGE_NETWORK;
  object_types: typeof OBJECT_TYPES;
  relation_types: typeof RELATION_TYPES;
  action_types: typeof ACTION_TYPES;
  objects: Record<string, Row[]>;
  relations: Record<string, [InstanceKey, InstanceKey][]>;
  metrics: Record<string, Record<string, Series>>;
  concept_groups: typeof CONCEPT_GROUPS;
  metric_definitions: typeof METRIC_DEFINITIONS;
  tool_boxes: typeof TOOL_BOXES;
  mcp_servers: typeof MCP_SERVERS;
}

/** Sizes of the parts that are not a word list. */
const SAMPLE_COMPANIES = 100;
const SAMPLE_PRODUCTS = 500;
const SAMPLE_NEW_PRODUCTS = 8;

/**
 * Shares of --scale per type; aliases follow the diseases, drug products take
 * the rest so the total comes out exact. Fixed-vocabulary types (departments,
 * body parts, dosage forms, classes, standards, supervision units) keep their size.
 */
const SCALE_SHARES = {
  disease: 0.22,
  symptom: 0.06,
  checklist: 0.012,
  facility: 0.006,
  company: 0.03,
  drugs: 0.025,
  drug_product_new: 0.01,
};

export function generateBundle(options: GenerateOptions = {}): GeneratedBundle {
  return new Builder(options.seed ?? DEFAULT_SEED, options.scale).build();
}

interface Catalog {
  /** Supervision unit ids by name. */
  units: Map<string, string>;
  /** drug_product_class ids (integers) by name. */
  classIds: Map<string, number>;
  /** drug_product_type ids by dosage form name. */
  formIds: Map<string, string>;
}

interface Named {
  name: string;
  /** Systems a symptom or check belongs to; "general" for the common ones. */
  systems: (SystemId | "general")[];
}

/** The diseases' ids by body system and by name, for the bindings drawn after them. */
interface DiseaseIds {
  bySystem: Map<SystemId, string[]>;
  byName: Map<string, string>;
}

interface Company {
  id: string;
  name: string;
  city: City;
}

const PROPERTY_NAMES = new Map(OBJECT_TYPES.map((t) => [t.id, t.data_properties.map((p) => p.name)]));

/** Allocates "<prefix>_000001"-style ids, skipping the ones fixed to named instances. */
class Ids {
  private counter = 1;
  private readonly reserved: Set<string>;

  constructor(
    private readonly prefix: string,
    private readonly fixed: Record<string, string> = {},
  ) {
    this.reserved = new Set(Object.values(fixed));
  }

  /** The id of a named instance: its fixed one, else the next free one. */
  for(name: string): string {
    return this.fixed[name] ?? this.next();
  }

  next(): string {
    for (;;) {
      const id = `${this.prefix}_${pad(this.counter++, 6)}`;
      if (!this.reserved.has(id)) return id;
    }
  }
}

/** FNV-1a, to give each part of the bundle its own PRNG stream. */
function hash(text: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) h = Math.imul(h ^ text.charCodeAt(i), 0x01000193);
  return h >>> 0;
}

/** The value under `key`; a missing one is a bug in the word lists. */
function lookup<K, V>(map: Map<K, V>, key: K, what: string): V {
  const value = map.get(key);
  if (value === undefined) throw new Error(`no ${what} ${String(key)}`);
  return value;
}

/** Appends to the list under `key`, creating it. */
function push<K, V>(map: Map<K, V[]>, key: K, value: V): void {
  const list = map.get(key);
  if (list) list.push(value);
  else map.set(key, [value]);
}

class Builder {
  private readonly objects: Record<string, Row[]> = {};
  private readonly relations: Record<string, [InstanceKey, InstanceKey][]> = {};

  constructor(
    private readonly seed: number,
    private readonly scale: number | undefined,
  ) {
    for (const t of OBJECT_TYPES) this.objects[t.id] = [];
    for (const r of RELATION_TYPES) this.relations[r.id] = [];
  }

  /** A PRNG per part, so that changing one part leaves the others' draws alone. */
  private rng(part: string): Random {
    return new Random(this.seed ^ hash(part));
  }

  /** How many of a scalable type: its word list, or its share of --scale if larger. */
  private count(type: keyof typeof SCALE_SHARES, base: number): number {
    return this.scale === undefined ? base : Math.max(base, Math.round(this.scale * SCALE_SHARES[type]));
  }

  build(): GeneratedBundle {
    const bodyparts = this.bodyparts();
    const departments = this.departments();
    this.facilities(departments);
    const symptoms = this.symptomsOrChecks("symptom", "symptom", GENERAL_SYMPTOMS, (s) => s.symptoms, symptomVariants);
    const checks = this.symptomsOrChecks("checklist", "check_item", GENERAL_CHECKS, (s) => s.checks, checkVariants);
    const drugs = this.drugs();
    const diseases = this.diseases({ bodyparts, departments, symptoms, checks, drugsBySystem: drugs.bySystem });
    this.skills(diseases, departments);

    const catalog = this.catalog();
    const companies = this.companies();
    const products = this.drugProducts(companies, drugs.seeds, catalog);
    this.newDrugProducts(drugs.seeds, catalog);

    const metric: Record<string, Series> = {};
    const months = metricMonths();
    for (const company of companies) {
      const counts = new Map<number, number>();
      for (const p of products.get(company.id) ?? []) {
        const month = monthIndex(p.approvalDate);
        counts.set(month, (counts.get(month) ?? 0) + 1);
      }
      metric[company.id] = months.map((ts, i) => [ts, counts.get(i) ?? 0]);
    }

    for (const type of OBJECT_TYPES) {
      const key = type.primary_keys[0] ?? "";
      this.objects[type.id]?.sort((a, b) => compareKeys(asKey(a[key]), asKey(b[key])));
    }
    for (const pairs of Object.values(this.relations))
      pairs.sort((a, b) => compareKeys(a[0], b[0]) || compareKeys(a[1], b[1]));
    return {
      knowledge_network: KNOWLEDGE_NETWORK,
      object_types: OBJECT_TYPES,
      relation_types: RELATION_TYPES,
      action_types: ACTION_TYPES,
      objects: this.objects,
      relations: this.relations,
      metrics: { [APPROVED_DRUG_COUNT_METRIC]: metric },
      concept_groups: CONCEPT_GROUPS,
      metric_definitions: METRIC_DEFINITIONS,
      tool_boxes: TOOL_BOXES,
      mcp_servers: MCP_SERVERS,
    };
  }

  /** Adds a row with the type's data properties in schema order; every one must be given. */
  private add(typeId: string, values: Record<string, Json>): void {
    const names = PROPERTY_NAMES.get(typeId);
    if (!names) throw new Error(`no object type ${typeId}`);
    const row: Row = {};
    for (const name of names) {
      const value = values[name];
      if (value === undefined) throw new Error(`${typeId}: no value for ${name}`);
      row[name] = value;
    }
    this.objects[typeId]?.push(row);
  }

  /** Adds a pair; callers pass distinct pairs (draws are without replacement, merged lists go through a Set). */
  private relate(relationId: string, source: InstanceKey, target: InstanceKey): void {
    this.relations[relationId]?.push([source, target]);
  }

  private bodyparts(): Map<string, string> {
    const ids = new Ids("bodypart");
    const byName = new Map<string, string>();
    for (const name of new Set(Object.values(SYSTEMS).flatMap((s) => s.bodyparts))) {
      const id = ids.for(name);
      byName.set(name, id);
      this.add("bodypart", { bodypart_id: id, bodypart_name: name });
    }
    return byName;
  }

  private departments(): Map<string, string> {
    const ids = new Ids("department");
    const byName = new Map<string, string>();
    for (const [parent, children] of Object.entries(DEPARTMENT_TREE)) {
      for (const name of [parent, ...children]) {
        const id = ids.for(name);
        byName.set(name, id);
        this.add("department", { department_id: id, department_name: name });
      }
      const parentId = lookup(byName, parent, "department");
      for (const child of children) this.relate("is_a_facility", lookup(byName, child, "department"), parentId);
    }
    return byName;
  }

  private facilities(departments: Map<string, string>): void {
    const bases = Object.entries(FACILITIES).map(([name, owners]) => ({ name, owners }));
    const all = expandNames({
      bases,
      count: this.count("facility", bases.length),
      rng: this.rng("facility"),
      variantsOf: facilityVariants,
      renamed: (base, name) => ({ ...base, name }),
    });
    const ids = new Ids("facility");
    for (const facility of all) {
      const id = ids.for(facility.name);
      this.add("facility", { facility_id: id, facility_name: facility.name });
      for (const owner of facility.owners)
        this.relate("department_2_facility", lookup(departments, owner, "department"), id);
    }
  }

  /** Symptoms and checks: system lists plus common ones, grouped for drawing. */
  private symptomsOrChecks(
    typeId: "symptom" | "checklist",
    prefix: string,
    general: string[],
    listOf: (s: SystemVocabulary) => string[],
    variantsOf: (base: Named) => Named[],
  ): Map<SystemId | "general", string[]> {
    const systemsByName = new Map<string, (SystemId | "general")[]>();
    for (const [system, vocabulary] of systemEntries()) {
      for (const name of listOf(vocabulary)) push(systemsByName, name, system);
    }
    for (const name of general) push(systemsByName, name, "general");
    const bases: Named[] = [...systemsByName].map(([name, systems]) => ({ name, systems }));
    const all = expandNames({
      bases,
      count: this.count(typeId, bases.length),
      rng: this.rng(typeId),
      variantsOf,
      renamed: (base, name) => ({ ...base, name }),
    });
    const ids = new Ids(prefix, FIXED_IDS[typeId]);
    const bySystem = new Map<SystemId | "general", string[]>();
    const nameKey = typeId === "symptom" ? "symptom_name" : "check_item_name";
    const idKey = typeId === "symptom" ? "symptom_id" : "check_item_id";
    for (const item of all) {
      const id = ids.for(item.name);
      this.add(typeId, { [idKey]: id, [nameKey]: item.name });
      for (const system of item.systems) push(bySystem, system, id);
    }
    return bySystem;
  }

  /** drug_class (two levels), drugs and their links; returns the drug ids by system for `cures`. */
  private drugs(): { seeds: DrugEntry[]; bySystem: Map<SystemId, string[]> } {
    const classIds = new Ids("drug_class");
    const bases: DrugSeed[] = [];
    const subclassIds = new Map<string, string>();
    for (const group of DRUG_CLASSES) {
      const parent = classIds.for(group.name);
      this.add("drug_class", { drug_class_id: parent, drug_class_name: group.name });
      for (const subclass of group.subclasses) {
        const id = classIds.for(subclass.name);
        subclassIds.set(subclass.name, id);
        this.add("drug_class", { drug_class_id: id, drug_class_name: subclass.name });
        this.relate("is_a_level", id, parent);
        for (const entry of subclass.drugs) {
          const [name = "", en = "", form] = entry.split(":");
          const biological = ["生物制品", "疫苗", "血液制品"].includes(subclass.productClass);
          bases.push({ name, en, fixedForm: form ?? null, biological, subclass });
        }
      }
    }
    const all = expandNames({
      bases,
      count: this.count("drugs", bases.length),
      rng: this.rng("drugs"),
      variantsOf: drugVariants,
      renamed: (base, name) => ({ ...base, name }),
    });
    const ids = new Ids("drug");
    const bySystem = new Map<SystemId, string[]>();
    const seeds: DrugEntry[] = [];
    for (const drug of all) {
      const id = ids.for(drug.name);
      seeds.push({ id, drug });
      this.add("drugs", { drug_id: id, drug_name: drug.name });
      this.relate("is_a_level3", id, lookup(subclassIds, drug.subclass.name, "drug class"));
      for (const system of drug.subclass.systems) push(bySystem, system, id);
    }
    return { seeds, bySystem };
  }

  private diseases(pools: {
    bodyparts: Map<string, string>;
    departments: Map<string, string>;
    symptoms: Map<SystemId | "general", string[]>;
    checks: Map<SystemId | "general", string[]>;
    drugsBySystem: Map<SystemId, string[]>;
  }): DiseaseIds {
    const bases: DiseaseSeed[] = systemEntries().flatMap(([system, vocabulary]) =>
      vocabulary.diseases.map((entry) => {
        const [name = "", en = "", icd = "", aliases = ""] = entry.split("|");
        return { name, en: en || null, icd: icd || null, system, aliases: aliases ? aliases.split(",") : [] };
      }),
    );
    const all = expandNames({
      bases,
      count: this.count("disease", bases.length),
      rng: this.rng("disease"),
      variantsOf: (base) => diseaseVariants(base).map((v) => ({ ...v, aliases: [] })),
      renamed: (base, name) => ({ ...base, name, aliases: [] }),
      forbidden: FORBIDDEN_NAMES.disease,
    });

    const rng = this.rng("disease-properties");
    const ids = new Ids("disease", FIXED_IDS.disease);
    const aliasIds = new Ids("alias");
    const usedAliases = new Set(FORBIDDEN_NAMES.alias);
    const idByName = new Map<string, string>();
    const idsBySystem = new Map<SystemId, string[]>();
    const symptomIdByName = new Map(this.objects.symptom?.map((r) => [String(r.symptom_name), String(r.symptom_id)]));
    const bodypartEntries = [...pools.bodyparts];
    const isChild = (name: string) => /小儿|儿童|婴儿|婴幼儿|新生儿/u.test(name);
    const generalSymptoms = lookup(pools.symptoms, "general", "symptoms of");
    const generalChecks = lookup(pools.checks, "general", "checks of");

    for (const disease of all) {
      const id = ids.for(disease.name);
      idByName.set(disease.name, id);
      push(idsBySystem, disease.system, id);
      const fixed = FIXED_DISEASES[disease.name];
      const properties = { ...diseaseProperties(disease, rng), ...fixed?.properties };
      this.add("disease", { disease_id: id, disease_name: disease.name, ...properties });

      const symptomIds = fixed
        ? fixed.symptoms.map((name) => lookup(symptomIdByName, name, "symptom"))
        : draw(
            rng,
            lookup(pools.symptoms, disease.system, "symptoms of"),
            generalSymptoms,
            rng.int(3, 8),
            rng.int(0, 2),
          );
      for (const s of symptomIds) this.relate("has_symptom", id, s);

      const vocabulary = SYSTEMS[disease.system];
      const departmentNames = isChild(disease.name)
        ? [disease.name.includes("新生儿") ? "新生儿科" : "小儿内科", ...vocabulary.departments]
        : [...vocabulary.departments];
      const [primary = "", ...others] = departmentNames;
      const extra = rng.chance(0.2) ? [rng.pick(SIDE_DEPARTMENTS)] : [];
      for (const name of new Set([primary, ...rng.sample([...others, ...extra], rng.int(0, 2))])) {
        this.relate("designated_to", id, lookup(pools.departments, name, "department"));
      }

      const drugs = rng.sample(lookup(pools.drugsBySystem, disease.system, "drugs for"), rng.int(1, 4));
      for (const drug of drugs) this.relate("cures", id, drug);

      const systemChecks = lookup(pools.checks, disease.system, "checks of");
      const checks = draw(rng, systemChecks, generalChecks, rng.int(1, 4), rng.chance(0.4) ? 1 : 0);
      for (const check of checks) this.relate("checks", id, check);

      // Body parts named in the disease (肺 in 肺炎) first, then the system's.
      const named = bodypartEntries.filter(([name]) => disease.name.includes(name)).map(([, bodypartId]) => bodypartId);
      const systemParts = vocabulary.bodyparts.map((name) => lookup(pools.bodyparts, name, "body part"));
      const partCount = rng.int(1, 2);
      const parts = [...new Set([...named, ...rng.sample(systemParts, partCount)])].slice(0, partCount);
      for (const part of parts) this.relate("shown_on", id, part);

      const explicit = [...disease.aliases, ...(fixed?.aliases ?? [])];
      const derived = rng.chance(0.8) ? derivedAliases(disease.name, disease.en).slice(0, rng.int(1, 2)) : [];
      const aliases = explicit.length > 0 ? explicit : derived;
      for (const alias of aliases.slice(0, 3)) {
        if (usedAliases.has(alias) || alias === disease.name) continue;
        usedAliases.add(alias);
        const aliasId = aliasIds.for(alias);
        this.add("alias", { disease_alias_id: aliasId, disease_alias_name: alias });
        this.relate("has_alias", id, aliasId);
      }
    }

    // The known complications, then a few more within each system.
    const complications = new Map<string, [string, string]>();
    for (const [from, to] of COMPLICATIONS) {
      const pair: [string, string] = [lookup(idByName, from, "disease"), lookup(idByName, to, "disease")];
      complications.set(pair.join(">"), pair);
    }
    const complicationRng = this.rng("complications");
    for (const disease of all) {
      if (!complicationRng.chance(0.3)) continue;
      const id = lookup(idByName, disease.name, "disease");
      const sameSystem = lookup(idsBySystem, disease.system, "diseases of");
      for (const other of complicationRng.sample(sameSystem, complicationRng.int(1, 2))) {
        if (other !== id && !complications.has(`${id}>${other}`)) complications.set(`${id}>${other}`, [id, other]);
      }
    }
    for (const [source, target] of complications.values()) this.relate("has_complication", source, target);
    return { bySystem: idsBySystem, byName: idByName };
  }

  /** The small reference tables products point at: supervision units, standards, product classes, dosage forms. */
  /**
   * The skills and their bindings (agent-tools.ts): each system's triage skill
   * to its diseases and departments, the named ones to their diseases, one to
   * every disease, two to nothing. No draws: the other parts' data stays as it was.
   */
  private skills(diseases: DiseaseIds, departments: Map<string, string>): void {
    const everyDisease = [...diseases.bySystem.values()].flat();
    for (const binding of skillCatalog((system) => SYSTEMS[system].departments)) {
      const id = binding.skill.skill_id;
      this.add("skills", { ...binding.skill });
      const bound = new Set<string>(binding.allDiseases ? everyDisease : []);
      for (const system of binding.systems) for (const d of diseases.bySystem.get(system) ?? []) bound.add(d);
      for (const name of binding.diseases) bound.add(lookup(diseases.byName, name, "disease"));
      for (const d of bound) this.relate("disease_skills", d, id);
      for (const name of new Set(binding.departments))
        this.relate("department_skills", lookup(departments, name, "department"), id);
    }
  }

  private catalog(): Catalog {
    const unitIds = new Ids("unit");
    const units = new Map<string, string>();
    for (const name of [...NATIONAL_UNITS, ...new Set(CITIES.map((c) => provinceUnit(c.province)))]) {
      const id = unitIds.for(name);
      units.set(name, id);
      this.add("supervision_unit", { unit_id: id, unit_name: name });
    }
    const standardIds = new Ids("standard");
    for (const s of EXECUTIVE_STANDARDS) {
      const id = standardIds.next();
      this.add("executive_standard", { executive_standard_id: id, executive_standard_name: s.name, volume: s.volume });
    }
    const classIds = new Map<string, number>();
    PRODUCT_CLASSES.forEach((c, i) => {
      classIds.set(c.name, i + 1);
      this.add("drug_product_class", { drug_product_class_id: i + 1, drug_class: c.name });
    });
    const formIds = new Map<string, string>();
    const dosageFormIds = new Ids("dosage_form");
    for (const form of DOSAGE_FORMS) {
      const id = dosageFormIds.for(form.name);
      formIds.set(form.name, id);
      this.add("drug_product_type", { drug_product_type_id: id, dosage_form_name: form.name });
    }
    return { units, classIds, formIds };
  }

  private companies(): Company[] {
    const rng = this.rng("company");
    const count = this.scale === undefined ? SAMPLE_COMPANIES : Math.round(this.scale * SCALE_SHARES.company);
    const ids = new Ids("company");
    const used = new Set<string>();
    const companies: Company[] = [];
    while (companies.length < count) {
      const city = rng.pick(CITIES);
      const region = rng.chance(0.35) ? provinceShortName(city.province) : city.name;
      const [first, second] = rng.sample(BRAND_CHARACTERS, 2);
      const name = `${region}${first}${second}${rng.pick(COMPANY_SUFFIXES)}`;
      if (used.has(name)) continue;
      used.add(name);
      const id = ids.for(name);
      const municipality = city.province === `${city.name}市`;
      const street = `${rng.pick(city.districts)}${rng.pick(ROADS)}${rng.int(1, 999)}号`;
      const address = `${city.province}${municipality ? "" : `${city.name}市`}${street}`;
      companies.push({ id, name, city });
      this.add("company", { company_id: id, company_name: name, company_address: address });
    }
    return companies;
  }

  /** Drug products, each made by one company from one drug; returns them by company for the metric. */
  private drugProducts(companies: Company[], drugs: DrugEntry[], catalog: Catalog): Map<string, Product[]> {
    const rng = this.rng("drug_product");
    const total = this.productCount(companies.length, drugs.length);
    // Every drug has a product and every company at least three; the rest at random.
    const drugOf = rng.sample([...drugs, ...repeat(total - drugs.length, () => rng.pick(drugs))], total);
    const atLeastThree = companies.flatMap((c) => [c, c, c]);
    const companyOf = rng.sample(
      [...atLeastThree, ...repeat(total - atLeastThree.length, () => rng.pick(companies))],
      total,
    );
    const ids = new Ids("drug_product");
    const maker = new ProductMaker(rng);
    const byCompany = new Map<string, Product[]>();
    for (let i = 0; i < total; i++) {
      const drug = drugOf[i];
      const company = companyOf[i];
      if (!drug || !company) throw new Error("product assignment out of range");
      const product = maker.make(ids.next(), drug, provinceUnit(company.city.province));
      push(byCompany, company.id, product);
      this.add("drug_product", {
        drug_name: product.name,
        drug_product_id: product.id,
        calssify: product.productClass,
        dosage_form: product.form,
        packaging_specification: product.packing,
        original_drug_approval_number: product.originalNumber,
        trade_name: product.tradeName,
        nmpa_drug: product.unit,
        implementation_standard: `${product.standard.name}${product.standard.volume}`,
        approval_date: product.approvalDate,
        standard_number: product.standardNumber,
        first_registration_date: product.firstRegistration,
        english_or_latin_name: product.en,
        drug_approval_number: product.approvalNumber,
        specification: product.specification,
      });
      this.relate("produces", company.id, product.id);
      this.relate("is_a_drug", drug.id, product.id);
      this.relate("is_form", product.id, lookup(catalog.formIds, product.form, "dosage form"));
      this.relate("belongs_to", product.id, lookup(catalog.classIds, product.productClass, "product class"));
      this.relate("supervises", product.id, lookup(catalog.units, product.unit, "supervision unit"));
      this.relate("comly_with", product.id, lookup(catalog.units, product.standard.issuer, "supervision unit"));
    }
    return byCompany;
  }

  /** Drug products fill whatever --scale leaves; at least three per company and one per drug. */
  private productCount(companies: number, drugs: number): number {
    if (this.scale === undefined) return SAMPLE_PRODUCTS;
    const others = Object.entries(this.objects).reduce(
      (n, [type, rows]) => (type === "drug_product" ? n : n + rows.length),
      0,
    );
    const newProducts = Math.round(this.scale * SCALE_SHARES.drug_product_new);
    const total = this.scale - others - newProducts;
    const minimum = Math.max(3 * companies, drugs);
    if (total < minimum) {
      const smallest = others + newProducts + minimum;
      throw new Error(`--scale ${this.scale} is too small: the word lists alone make ${smallest} instances`);
    }
    return total;
  }

  /** A few rows of the newer product table (Chinese column names, date strings); no relations. */
  private newDrugProducts(drugs: DrugEntry[], catalog: Catalog): void {
    const rng = this.rng("drug_product_new");
    const count =
      this.scale === undefined ? SAMPLE_NEW_PRODUCTS : Math.round(this.scale * SCALE_SHARES.drug_product_new);
    const ids = new Ids("drug_product_new");
    const maker = new ProductMaker(rng);
    const provinces = [...catalog.units.keys()].filter((name) => !NATIONAL_UNITS.includes(name));
    for (let i = 0; i < count; i++) {
      const p = maker.make(ids.next(), rng.pick(drugs), rng.pick(provinces));
      this.add("drug_product_new", {
        drug_name: p.name,
        drug_product_id: p.id,
        分类: p.productClass,
        剂型: p.form,
        包装规格: p.packing,
        原药品批准文号: p.originalNumber,
        商品名: p.tradeName,
        国家药品监督管理局药: p.unit,
        执行标准: `${p.standard.name}${p.standard.volume}`,
        批准日期: isoDate(p.approvalDate),
        标准编号: p.standardNumber,
        第一次注册日期: p.firstRegistration,
        "英文名称/拉丁名": p.en,
        药品批准文号: p.approvalNumber,
        规格: p.specification,
      });
    }
  }
}

/** `count` distinct ids, `fromSecondary` of them from the secondary pool, topped up from either when one runs short. */
function draw(rng: Random, primary: string[], secondary: string[], count: number, fromSecondary: number): string[] {
  const chosen = new Set(rng.sample(primary, count - fromSecondary));
  for (const id of rng.sample(secondary, count - chosen.size)) chosen.add(id);
  // Topped up from the primary pool only when one ran short (drawing otherwise would change every later draw).
  if (chosen.size < count) {
    for (const id of rng.sample(primary, count)) {
      if (chosen.size >= count) break;
      chosen.add(id);
    }
  }
  return [...chosen];
}

function repeat<T>(times: number, make: () => T): T[] {
  return Array.from({ length: Math.max(0, times) }, make);
}

function systemEntries(): [SystemId, SystemVocabulary][] {
  return Object.entries(SYSTEMS) as [SystemId, SystemVocabulary][];
}

function asKey(value: Json | undefined): InstanceKey {
  return typeof value === "number" ? value : String(value);
}

function compareKeys(a: InstanceKey, b: InstanceKey): number {
  if (typeof a === "number" && typeof b === "number") return a - b;
  return String(a) < String(b) ? -1 : String(a) > String(b) ? 1 : 0;
}
