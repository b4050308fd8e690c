/** The limits a JSON text is held to while it arrives. */
export interface JsonShapeLimits {
  /** Arrays and objects nested deeper than this are refused. */
  maxDepth: number;
  /** More values than this (object members plus array items, at any depth) are refused. */
  maxValues: number;
}

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const COLON = 0x3a;
const COMMA = 0x2c;
const OPEN_ARRAY = 0x5b;
const CLOSE_ARRAY = 0x5d;
const OPEN_OBJECT = 0x7b;
const CLOSE_OBJECT = 0x7d;

/**
 * Measures a JSON text chunk by chunk as it arrives (bytes of UTF-8, split
 * anywhere, inside a string or an escape included), without building it: how
 * deep its arrays and objects nest, and how many values they hold (an
 * object's members, counted by their colons; an array's items, counted by its
 * commas plus one when it is not empty). A string is one value, however long
 * and whatever brackets, commas or escaped quotes it holds. So a body that
 * would cost seconds to parse and decode is refused after its first
 * kilobytes, in time proportional to its bytes. On valid JSON the counts are
 * exact; on invalid JSON they are some count of the same bytes, and the
 * parser that follows reports the syntax error.
 */
export class JsonShapeScanner {
  /** Values seen so far. */
  values = 0;
  /** The limit passed, once one was; the scanner ignores further chunks then. */
  over: "depth" | "values" | undefined;
  private depth = 0;
  private inString = false;
  private escaped = false;
  /** Per open container, 1 while it is an array with no item yet, 2 for any other array, 0 for an object. */
  private readonly open: Uint8Array;
  readonly limits: JsonShapeLimits;

  constructor(limits: JsonShapeLimits) {
    this.limits = limits;
    this.open = new Uint8Array(limits.maxDepth + 1);
  }

  /** Reads the next chunk; returns the limit passed, if one was (then or before). */
  write(chunk: Buffer): "depth" | "values" | undefined {
    if (this.over) return this.over;
    const { maxDepth, maxValues } = this.limits;
    const open = this.open;
    let { depth, inString, escaped, values } = this;
    for (let i = 0; i < chunk.length; i++) {
      const c = chunk[i]!;
      if (inString) {
        if (escaped) {
          escaped = false;
          continue;
        }
        // Jump to the next quote (texts are most of a large body) and tell whether the backslashes
        // just before it escape it; with no quote left, whether the chunk ends mid-escape.
        const quote = chunk.indexOf(QUOTE, i);
        const end = quote === -1 ? chunk.length : quote;
        let k = end - 1;
        while (k >= i && chunk[k] === BACKSLASH) k--;
        const odd = (end - 1 - k) % 2 === 1;
        if (quote === -1) {
          escaped = odd;
          break;
        }
        i = quote;
        if (!odd) inString = false;
        continue;
      }
      // Whitespace between tokens never starts an array's first item.
      if (c === 0x20 || c === 0x0a || c === 0x0d || c === 0x09) continue;
      if (depth > 0 && open[depth] === 1 && c !== CLOSE_ARRAY) {
        open[depth] = 2;
        values++;
      }
      if (c === QUOTE) inString = true;
      else if (c === COLON) values++;
      else if (c === COMMA) {
        if (depth > 0 && open[depth] !== 0) values++;
      } else if (c === OPEN_ARRAY || c === OPEN_OBJECT) {
        if (++depth > maxDepth) {
          this.over = "depth";
          return this.over;
        }
        open[depth] = c === OPEN_ARRAY ? 1 : 0;
      } else if (c === CLOSE_ARRAY || c === CLOSE_OBJECT) {
        if (depth > 0) depth--;
      }
      if (values > maxValues) {
        this.values = values;
        this.over = "values";
        return this.over;
      }
    }
    this.depth = depth;
    this.inString = inString;
    this.escaped = escaped;
    this.values = values;
    return undefined;
  }
}
