import { describe, expect, it } from "vitest";
import { EnvelopedJsonMeter } from "../../src/server/enveloped-json";

const limits = { maxBytes: 1000, maxDepth: 8, maxValues: 10 };

/** A gRPC / Connect envelope: flags, a 4-byte length, the message. */
function envelope(message: string | Buffer, flags = 0): Buffer {
  const body = typeof message === "string" ? Buffer.from(message, "utf8") : message;
  const header = Buffer.alloc(5);
  header[0] = flags;
  header.writeUInt32BE(body.length, 1);
  return Buffer.concat([header, body]);
}

/** The reason the meter refuses `bytes` with, written one byte at a time; undefined when it does not. */
function byteByByte(bytes: Buffer): string | undefined {
  const meter = new EnvelopedJsonMeter(limits);
  for (let i = 0; i < bytes.length; i++) {
    const problem = meter.write(bytes.subarray(i, i + 1));
    if (problem) return problem.reason;
  }
  return undefined;
}

describe("EnvelopedJsonMeter", () => {
  const ten = JSON.stringify(Object.fromEntries(Array.from({ length: 10 }, (_, i) => [`k${i}`, '\\"[{,'])));
  const eleven = JSON.stringify(Object.fromEntries(Array.from({ length: 11 }, (_, i) => [`k${i}`, i])));

  it("holds each message to the JSON limits, whatever the chunks, its header split included", () => {
    expect(byteByByte(envelope(ten))).toBeUndefined();
    expect(byteByByte(Buffer.concat([envelope(ten), envelope(""), envelope(ten)]))).toBeUndefined();
    expect(byteByByte(envelope(eleven))).toBe("JSON_TOO_LARGE");
    expect(byteByByte(Buffer.concat([envelope(ten), envelope(eleven)]))).toBe("JSON_TOO_LARGE");
    expect(byteByByte(envelope("[".repeat(9)))).toBe("JSON_TOO_DEEP");
    expect(new EnvelopedJsonMeter(limits).write(envelope(eleven))?.reason).toBe("JSON_TOO_LARGE");
  });

  it("refuses a message announced longer than maxBytes at its header, and leaves a compressed one to the router", () => {
    const header = envelope("").subarray(0, 5);
    header.writeUInt32BE(1001, 1);
    expect(new EnvelopedJsonMeter(limits).write(header)?.reason).toBe("REQUEST_TOO_LARGE");
    expect(byteByByte(envelope(Buffer.from(eleven), 1))).toBeUndefined();
  });
});
