import { pinyin } from "pinyin-pro";

/** A character's toneless pinyin readings (a heteronym has several), plain and blurred (see `blurred`). */
interface Sounds {
  readings: readonly string[];
  blurred: readonly string[];
}

/** Looked up once per character per process: matching compares characters in tight loops. */
const sounds = new Map<string, Sounds | null>();

function soundsOf(char: string): Sounds | null {
  let s = sounds.get(char);
  if (s === undefined) {
    if (/\p{Script=Han}/u.test(char)) {
      const readings = [...new Set(pinyin(char, { toneType: "none", type: "array", multiple: true }))];
      s = { readings, blurred: readings.map(blurred) };
    } else s = null;
    sounds.set(char, s);
  }
  return s;
}

/**
 * Sounds people confuse when they type pinyin: flat and curled initials
 * (z/zh, c/ch, s/sh), n/l, f/h, r/l, and front and back nasals (in/ing, en/eng, an/ang).
 */
function blurred(reading: string): string {
  return reading
    .replace(/^([zcs])h/, "$1")
    .replace(/^l/, "n")
    .replace(/^f/, "h")
    .replace(/^r/, "n")
    .replace(/(in|en|an)g$/, "$1");
}

/**
 * How far apart two characters are for someone typing by sound: 0 for the
 * same character, 0.25 for two Chinese characters sharing a reading (湿诊 for
 * 湿疹, 寻麻疹 for 荨麻疹: 荨 reads qián or xún), 0.5 for readings people
 * confuse (帕金深病 for 帕金森病), 1 otherwise.
 */
export function soundDistance(a: string, b: string): number {
  if (a === b) return 0;
  const sa = soundsOf(a);
  const sb = soundsOf(b);
  if (!sa || !sb) return 1;
  if (sa.readings.some((x) => sb.readings.includes(x))) return 0.25;
  return sa.blurred.some((x) => sb.blurred.includes(x)) ? 0.5 : 1;
}

/** Two characters that are the same, or two Chinese characters sharing a reading. */
export function soundAlike(a: string, b: string): boolean {
  if (a === b) return true;
  const sa = soundsOf(a);
  const sb = soundsOf(b);
  return sa !== null && sb !== null && sa.readings.some((x) => sb.readings.includes(x));
}
