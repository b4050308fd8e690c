import { type JsonShapeLimits, JsonShapeScanner } from "../core/json-shape";
import type { ToolError } from "../errors/tool-error";
import { type BodyMeter, shapeRefusal, tooLarge } from "./request-body";

/** The flag of an envelope whose message is compressed. */
const COMPRESSED = 0x01;

/**
 * Measures a body of enveloped JSON messages (gRPC, gRPC-web and Connect
 * streaming with `+json`: per message, a flag byte, a 4-byte length, the
 * message) as it arrives: each uncompressed message is held to the JSON
 * limits (see JsonShapeScanner) and each to `maxBytes`, as the router holds
 * it, so it is refused before the router parses it. A compressed message is
 * only held to `maxBytes` here (its length on the wire); the router inflates
 * it, at most `maxBytes`, and parses it.
 */
export class EnvelopedJsonMeter implements BodyMeter {
  private readonly header = Buffer.alloc(5);
  private headerBytes = 0;
  /** Bytes of the current message still to come; undefined while its header is read. */
  private remaining: number | undefined;
  private scanner: JsonShapeScanner | undefined;
  private readonly limits: JsonShapeLimits & { maxBytes: number };

  constructor(limits: JsonShapeLimits & { maxBytes: number }) {
    this.limits = limits;
  }

  write(chunk: Buffer): ToolError | undefined {
    let i = 0;
    while (i < chunk.length) {
      if (this.remaining === undefined) {
        const n = Math.min(5 - this.headerBytes, chunk.length - i);
        chunk.copy(this.header, this.headerBytes, i, i + n);
        this.headerBytes += n;
        i += n;
        if (this.headerBytes < 5) return undefined;
        this.headerBytes = 0;
        this.remaining = this.header.readUInt32BE(1);
        if (this.remaining > this.limits.maxBytes) return tooLarge(this.limits.maxBytes);
        this.scanner = (this.header[0]! & COMPRESSED) === 0 ? new JsonShapeScanner(this.limits) : undefined;
      }
      const n = Math.min(this.remaining, chunk.length - i);
      if (this.scanner?.write(chunk.subarray(i, i + n))) return shapeRefusal(this.scanner);
      this.remaining -= n;
      i += n;
      if (this.remaining === 0) this.remaining = undefined;
    }
    return undefined;
  }
}

/** One uncompressed envelope holding `{}`: what the router is handed in place of a refused body. */
export const EMPTY_JSON_ENVELOPE = new Uint8Array([0, 0, 0, 0, 2, 0x7b, 0x7d]);
