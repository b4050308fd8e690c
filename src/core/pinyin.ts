import { pinyin } from "pinyin-pro";

/** Each character's toneless pinyin, looked up once per process (heteronyms: the commonest reading). */
const readings = new Map<string, string>();

function readingOf(char: string): string {
  let r = readings.get(char);
  if (r === undefined) {
    r = /\p{Script=Han}/u.test(char) ? pinyin(char, { toneType: "none" }) : char;
    readings.set(char, r);
  }
  return r;
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
 * How far apart two characters are for a reader typing by sound: 0 for the
 * same character, 0.25 for the same pinyin (帕金深病 for 帕金森病 is a
 * near-homophone: 0.5), 0.5 for pinyin people confuse, 1 otherwise.
 */
export function soundDistance(a: string, b: string): number {
  if (a === b) return 0;
  const ra = readingOf(a);
  const rb = readingOf(b);
  if (ra === rb) return ra === a || rb === b ? 1 : 0.25;
  return blurred(ra) === blurred(rb) && /\p{Script=Han}/u.test(a) && /\p{Script=Han}/u.test(b) ? 0.5 : 1;
}
