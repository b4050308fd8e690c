/** Dates: the company metric's months and the products' approval dates. */

/** The metric's months, 2015-01 … 2026-10, are also the months products are approved in. */
export const FIRST_YEAR = 2015;
export const LAST_YEAR = 2026;
export const LAST_MONTH = 10;
/** Asia/Shanghai has been UTC+8 all year since 1991. */
const SHANGHAI_OFFSET_MS = 8 * 3600 * 1000;

/** The first day of each metric month at 00:00 Asia/Shanghai, in ms. */
export function metricMonths(): number[] {
  const months: number[] = [];
  for (let year = FIRST_YEAR; year <= LAST_YEAR; year++) {
    for (let month = 1; month <= (year === LAST_YEAR ? LAST_MONTH : 12); month++) {
      months.push(Date.UTC(year, month - 1, 1) - SHANGHAI_OFFSET_MS);
    }
  }
  return months;
}

/** The metric month (index into metricMonths()) of a yyyymmdd date. */
export function monthIndex(yyyymmdd: number): number {
  const year = Math.floor(yyyymmdd / 10000);
  const month = Math.floor(yyyymmdd / 100) % 100;
  return (year - FIRST_YEAR) * 12 + month - 1;
}

export function daysInMonth(year: number, month: number): number {
  return new Date(Date.UTC(year, month, 0)).getUTCDate();
}

/** 20180523 → "2018-05-23". */
export function isoDate(yyyymmdd: number): string {
  const s = String(yyyymmdd);
  return `${s.slice(0, 4)}-${s.slice(4, 6)}-${s.slice(6, 8)}`;
}

export function pad(n: number, width: number): string {
  return String(n).padStart(width, "0");
}
