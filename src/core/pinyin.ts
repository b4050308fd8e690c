import { pinyin } from "pinyin-pro";

/** Each character's toneless pinyin readings (a heteronym has several), looked up once per process. */
const readings = new Map<string, readonly string[]>();

function readingsOf(char: string): readonly string[] {
  let r = readings.get(char);
  if (r === undefined) {
    r = /\p{Script=Han}/u.test(char) ? [...new Set(pinyin(char, { toneType: "none", type: "array", multiple: true }))] : [];
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
 * How far apart two characters are for someone typing by sound: 0 for the
 * same character, 0.25 for two Chinese characters sharing a reading (湿诊 for
 * 湿疹, 寻麻疹 for 荨麻疹: 荨 reads qián or xún), 0.5 for readings people
 * confuse (帕金深病 for 帕金森病), 1 otherwise.
 */
export function soundDistance(a: string, b: string): number {
  if (a === b) return 0;
  const ra = readingsOf(a);
  const rb = readingsOf(b);
  if (ra.length === 0 || rb.length === 0) return 1;
  if (ra.some((x) => rb.includes(x))) return 0.25;
  const bb = rb.map(blurred);
  return ra.some((x) => bb.includes(blurred(x))) ? 0.5 : 1;
}

/** Two characters that are the same, or two Chinese characters sharing a reading. */
export function soundAlike(a: string, b: string): boolean {
  return soundDistance(a, b) <= 0.25;
}
