import { daysInMonth, FIRST_YEAR, isoDate, LAST_MONTH, LAST_YEAR, pad } from "./calendar";
import { TRADE_NAME_CHARACTERS } from "./company-vocabulary";
import {
  DOSAGE_FORMS,
  type DosageForm,
  type DrugSubclass,
  EXECUTIVE_STANDARDS,
  type ExecutiveStandard,
  PACKING,
  PRODUCT_CLASSES,
} from "./drug-vocabulary";
import type { Random } from "./random";

/** Drugs and the products made of them (drug_product and drug_product_new rows). */

/** A drug as drawn: its word-list entry or a variant of one. */
export interface DrugSeed {
  name: string;
  en: string;
  /** The one dosage form of a proprietary Chinese medicine (板蓝根颗粒); null: any of its subclass's forms. */
  fixedForm: string | null;
  biological: boolean;
  subclass: DrugSubclass;
}

/** A drugs instance. */
export interface DrugEntry {
  id: string;
  drug: DrugSeed;
}

export interface Product {
  id: string;
  name: string;
  productClass: string;
  form: string;
  packing: string;
  originalNumber: string | null;
  tradeName: string;
  /** The supervising drug administration (supervises, and the nmpa_drug column). */
  unit: string;
  standard: ExecutiveStandard;
  approvalDate: number;
  standardNumber: string;
  firstRegistration: string;
  en: string;
  approvalNumber: string;
  specification: string;
}

/** The product-level draws shared by drug_product and drug_product_new. */
export class ProductMaker {
  private readonly approvalNumbers = new Set<string>();
  /** The first approval number of each drug: later products of it name it as their reference. */
  private readonly reference = new Map<string, string>();

  constructor(private readonly rng: Random) {}

  make(id: string, seed: DrugEntry, unit: string): Product {
    const { rng } = this;
    const { drug } = seed;
    const form = formNamed(drug.fixedForm ?? rng.pick(drug.subclass.forms));
    const formed = form.prefix ? `${form.prefix}${drug.name}` : `${drug.name}${form.suffix ?? ""}`;
    const name = drug.fixedForm !== null ? drug.name : formed;
    const en = drug.fixedForm !== null ? drug.en : `${drug.en} ${form.en}`;

    const year = rng.int(FIRST_YEAR, LAST_YEAR);
    const month = rng.int(1, year === LAST_YEAR ? LAST_MONTH : 12);
    const day = rng.int(1, daysInMonth(year, month));
    const approvalDate = year * 10000 + month * 100 + day;
    // About half are first registrations; the rest re-registrations of an older approval.
    const firstYear = rng.chance(0.45) ? year : rng.int(Math.max(1998, year - 20), year - 1);
    const firstRegistration =
      firstYear === year ? isoDate(approvalDate) : `${firstYear}-${pad(rng.int(1, 12), 2)}-${pad(rng.int(1, 28), 2)}`;

    const letter = PRODUCT_CLASSES.find((c) => c.name === drug.subclass.productClass)?.letter ?? "H";
    let approvalNumber: string;
    do approvalNumber = `国药准字${letter}${firstYear}${pad(rng.int(0, 9999), 4)}`;
    while (this.approvalNumbers.has(approvalNumber));
    this.approvalNumbers.add(approvalNumber);
    const originalNumber = this.reference.get(seed.id) ?? null;
    if (originalNumber === null) this.reference.set(seed.id, approvalNumber);

    const standard = rng.pick(
      EXECUTIVE_STANDARDS.filter(
        (s) => s.productClasses.includes(drug.subclass.productClass) && s.fromYear <= year && year <= s.toYear,
      ),
    );
    const packing = PACKING[form.pack];
    const [first, second] = rng.sample(TRADE_NAME_CHARACTERS, 2);
    return {
      id,
      name,
      productClass: drug.subclass.productClass,
      form: form.name,
      packing: rng.pick(packing.packs),
      originalNumber,
      tradeName: `${first}${second}`,
      unit,
      standard,
      approvalDate,
      standardNumber: standardNumber(standard, year, rng),
      firstRegistration,
      en,
      approvalNumber,
      specification: rng.pick(packing.specs),
    };
  }
}

function formNamed(name: string): DosageForm {
  const form = DOSAGE_FORMS.find((f) => f.name === name);
  if (!form) throw new Error(`no dosage form ${name}`);
  return form;
}

/** Standard numbers in the shapes the NMPA database shows. */
function standardNumber(standard: ExecutiveStandard, approvalYear: number, rng: Random): string {
  switch (standard.numbering) {
    case "chp":
      return `ChP${standard.fromYear}`;
    case "ws1":
      return `WS1-(X-${pad(rng.int(1, 399), 3)})-${rng.int(2002, 2010)}Z`;
    case "ws3":
      return `WS3-B-${pad(rng.int(1, 3999), 4)}-${rng.int(91, 98)}`;
    case "ybh":
      return `YBH${pad(rng.int(1, 9999), 4)}${approvalYear}`;
    case "ybs":
      return `YBS${pad(rng.int(1, 9999), 4)}${approvalYear}`;
    case "jx":
      return `JX${approvalYear}${pad(rng.int(1, 9999), 4)}`;
  }
}
