import { RE2JS } from "re2js";

/**
 * Regular expressions that callers write (a condition's `regex`), compiled on
 * RE2 (re2js): matching takes time linear in the text whatever the pattern,
 * so a pattern like `^(?:.|.){28}Z` cannot hold the event loop for seconds as
 * a backtracking engine does. RE2 has no backreferences and no lookaround;
 * those patterns are refused with what is unsupported, never run another way.
 */

/** The longest pattern accepted: an agent's filter is short, and compiling costs with length. */
export const MAX_PATTERN_LENGTH = 512;

/** Compiled patterns kept for reuse (conditions repeat across pages and calls); the oldest goes first. */
const CACHE_SIZE = 256;

export type CompiledPattern = { ok: true; regex: RE2JS } | { ok: false; problem: string };

const cache = new Map<string, CompiledPattern>();

/**
 * The pattern compiled, or what is wrong with it in words for the caller.
 * JavaScript's `\uXXXX` and `\u{X}` escapes are read as the code points they
 * name (RE2 writes `\x{X}`), so a pattern written for JavaScript's `u` mode
 * means the same; `.` matches one code point, `^` and `$` the ends of the text.
 */
export function compilePattern(pattern: string): CompiledPattern {
  const cached = cache.get(pattern);
  if (cached) {
    cache.delete(pattern);
    cache.set(pattern, cached);
    return cached;
  }
  const compiled = compile(pattern);
  cache.set(pattern, compiled);
  if (cache.size > CACHE_SIZE) cache.delete(cache.keys().next().value!);
  return compiled;
}

function compile(pattern: string): CompiledPattern {
  if (pattern.length > MAX_PATTERN_LENGTH) {
    return { ok: false, problem: `the pattern has ${pattern.length} characters; at most ${MAX_PATTERN_LENGTH}` };
  }
  const translated = translate(pattern);
  if (!translated.ok) return translated;
  try {
    return { ok: true, regex: RE2JS.compile(translated.source) };
  } catch (err) {
    const said = (err as Error).message.replace(/^error parsing regexp: /, "");
    return { ok: false, problem: `invalid regular expression (RE2 syntax): ${said}` };
  }
}

/** Lookaround openings, which RE2 cannot run in linear time. */
const LOOKAROUND: Record<string, string> = {
  "(?=": "lookahead (?=…)",
  "(?!": "negative lookahead (?!…)",
  "(?<=": "lookbehind (?<=…)",
  "(?<!": "negative lookbehind (?<!…)",
};

type Translated = { ok: true; source: string } | { ok: false; problem: string };

function unsupported(what: string): Translated {
  return {
    ok: false,
    problem: `${what} is not supported: patterns use RE2 syntax (linear-time matching; no backreferences or lookaround)`,
  };
}

/** The pattern in RE2's spelling, or why it has none. One pass, aware of escapes and character classes. */
function translate(pattern: string): Translated {
  let out = "";
  let inClass = false;
  for (let i = 0; i < pattern.length; i++) {
    const ch = pattern[i]!;
    if (ch === "\\") {
      const next = pattern[i + 1] ?? "";
      if (/[1-9]/.test(next) && !inClass) return unsupported(`the backreference \\${next}`);
      if (next === "k" && pattern[i + 2] === "<") return unsupported("the named backreference \\k<…>");
      if (next === "u") {
        const braced = /^\{([0-9a-fA-F]{1,6})\}/.exec(pattern.slice(i + 2));
        const four = /^[0-9a-fA-F]{4}/.exec(pattern.slice(i + 2));
        if (braced) {
          out += `\\x{${braced[1]}}`;
          i += 1 + braced[0].length;
          continue;
        }
        if (four) {
          let code = Number.parseInt(four[0], 16);
          let length = 4;
          // A surrogate pair written as two escapes is one code point, as in JavaScript's u mode.
          const low = /^\\u([dD][c-fC-F][0-9a-fA-F]{2})/.exec(pattern.slice(i + 6));
          if (code >= 0xd800 && code <= 0xdbff && low) {
            code = 0x10000 + ((code - 0xd800) << 10) + (Number.parseInt(low[1]!, 16) - 0xdc00);
            length += 6;
          }
          out += `\\x{${code.toString(16)}}`;
          i += 1 + length;
          continue;
        }
      }
      out += ch + next;
      i++;
      continue;
    }
    if (inClass) {
      if (ch === "]") inClass = false;
    } else if (ch === "[") {
      inClass = true;
      // In RE2 a ] right after [ or [^ is a member, not the end of the class.
      let skip = pattern[i + 1] === "^" ? 1 : 0;
      if (pattern[i + 1 + skip] === "]") skip++;
      out += pattern.slice(i, i + 1 + skip);
      i += skip;
      continue;
    } else if (ch === "(") {
      const opening = Object.keys(LOOKAROUND).find((o) => pattern.startsWith(o, i));
      if (opening) return unsupported(`${LOOKAROUND[opening]}`);
    }
    out += ch;
  }
  return { ok: true, source: out };
}
