/**
 * Calendar arithmetic in an IANA time zone with nothing but Intl: the start of
 * the day / week (Monday) / month / quarter / year holding an instant, and the
 * next such boundary. Used for metric buckets and relative time expressions.
 */

/**
 * The time window the platform accepts, in ms (UTC): metric timestamps, a
 * request's now_ms and every time the resolver works out lie between
 * 2000-01-01 and 2100-01-01. Outside it a number is a mistake (seconds given
 * for milliseconds, say), never a time to compute with.
 */
export const MIN_MS = Date.UTC(2000, 0, 1);
export const MAX_MS = Date.UTC(2100, 0, 1);

export type CalendarUnit = "day" | "week" | "month" | "quarter" | "year";
export const CALENDAR_UNITS: readonly CalendarUnit[] = ["day", "week", "month", "quarter", "year"];

interface WallClock {
  year: number;
  month: number; // 1..12
  day: number;
  hour: number;
  minute: number;
  second: number;
  /** 0 = Monday … 6 = Sunday. */
  weekday: number;
}

const formatters = new Map<string, Intl.DateTimeFormat>();
const weekdays: Record<string, number> = { Mon: 0, Tue: 1, Wed: 2, Thu: 3, Fri: 4, Sat: 5, Sun: 6 };

function formatter(timeZone: string): Intl.DateTimeFormat {
  let f = formatters.get(timeZone);
  if (!f) {
    f = new Intl.DateTimeFormat("en-US", {
      timeZone,
      hourCycle: "h23",
      year: "numeric",
      month: "numeric",
      day: "numeric",
      hour: "numeric",
      minute: "numeric",
      second: "numeric",
      weekday: "short",
    });
    formatters.set(timeZone, f);
  }
  return f;
}

/** True when `timeZone` is an IANA zone this runtime knows. */
export function isValidTimeZone(timeZone: string): boolean {
  try {
    formatter(timeZone);
    return true;
  } catch {
    return false;
  }
}

/** The wall clock in `timeZone` at instant `ms`. */
export function wallClock(ms: number, timeZone: string): WallClock {
  const parts: Record<string, string> = {};
  for (const p of formatter(timeZone).formatToParts(new Date(ms))) parts[p.type] = p.value;
  return {
    year: Number(parts["year"]),
    month: Number(parts["month"]),
    day: Number(parts["day"]),
    hour: Number(parts["hour"]),
    minute: Number(parts["minute"]),
    second: Number(parts["second"]),
    weekday: weekdays[parts["weekday"] ?? "Mon"] ?? 0,
  };
}

/** The instant at which `timeZone`'s wall clock reads the given date and time (days may overflow, as Date.UTC allows). */
export function instantOf(
  timeZone: string,
  year: number,
  month: number,
  day: number,
  hour = 0,
  minute = 0,
  second = 0,
): number {
  const asUtc = Date.UTC(year, month - 1, day, hour, minute, second);
  const offsetAt = (ms: number) => {
    const w = wallClock(ms, timeZone);
    return Date.UTC(w.year, w.month - 1, w.day, w.hour, w.minute, w.second) - Math.floor(ms / 1000) * 1000;
  };
  // Two rounds settle the offset even next to a daylight-saving change.
  const first = asUtc - offsetAt(asUtc);
  return asUtc - offsetAt(first);
}

/** The start of the `unit` that holds instant `ms` in `timeZone`. */
export function startOf(unit: CalendarUnit, ms: number, timeZone: string): number {
  const w = wallClock(ms, timeZone);
  switch (unit) {
    case "day":
      return instantOf(timeZone, w.year, w.month, w.day);
    case "week":
      return instantOf(timeZone, w.year, w.month, w.day - w.weekday);
    case "month":
      return instantOf(timeZone, w.year, w.month, 1);
    case "quarter":
      return instantOf(timeZone, w.year, w.month - ((w.month - 1) % 3), 1);
    case "year":
      return instantOf(timeZone, w.year, 1, 1);
  }
}

/** The start of the `unit` `n` units after the one starting at `start` (n may be negative). */
export function addUnits(unit: CalendarUnit, start: number, n: number, timeZone: string): number {
  const w = wallClock(start, timeZone);
  switch (unit) {
    case "day":
      return instantOf(timeZone, w.year, w.month, w.day + n);
    case "week":
      return instantOf(timeZone, w.year, w.month, w.day + 7 * n);
    case "month":
      return instantOf(timeZone, w.year, w.month + n, 1);
    case "quarter":
      return instantOf(timeZone, w.year, w.month + 3 * n, 1);
    case "year":
      return instantOf(timeZone, w.year + n, 1, 1);
  }
}

/** The number of days in `month` (1..12) of `year`. */
export function daysInMonth(year: number, month: number): number {
  return new Date(Date.UTC(year, month, 0)).getUTCDate();
}

/**
 * The same wall-clock time `n` units away from instant `ms` (n may be negative),
 * for rolling windows. A day the target month lacks becomes its last day, so
 * three months before May 31 is February 28 rather than March 3.
 */
export function shiftUnits(unit: CalendarUnit, ms: number, n: number, timeZone: string): number {
  const w = wallClock(ms, timeZone);
  const subSecond = ms - Math.floor(ms / 1000) * 1000;
  const at = (year: number, month: number, day: number) =>
    instantOf(timeZone, year, month, day, w.hour, w.minute, w.second) + subSecond;
  switch (unit) {
    case "day":
      return at(w.year, w.month, w.day + n);
    case "week":
      return at(w.year, w.month, w.day + 7 * n);
    case "month":
    case "quarter":
    case "year": {
      const months = w.year * 12 + (w.month - 1) + n * (unit === "month" ? 1 : unit === "quarter" ? 3 : 12);
      const year = Math.floor(months / 12);
      const month = months - year * 12 + 1;
      return at(year, month, Math.min(w.day, daysInMonth(year, month)));
    }
  }
}
