import type { DescField, DescMessage } from "@bufbuild/protobuf";
import { ToolError } from "../errors/tool-error";

/** What a look at a binary message found before it is decoded. */
export type ProtoShape = "ok" | "too_deep" | "malformed";

/** One message (or map entry) open in the walk: where it ends, and the message each length-delimited field holds. */
interface Frame {
  end: number;
  /** A map entry is not a level of nesting (protobuf-es does not count it either). */
  isMessage: boolean;
  /** The message field `no` holds; "entry" for a map field's entries; undefined for scalars, strings, bytes. */
  child(no: number): DescMessage | { mapValue: DescMessage | undefined } | undefined;
}

const fieldsByNumber = new WeakMap<DescMessage, Map<number, DescField>>();

function fieldOf(desc: DescMessage, no: number): DescField | undefined {
  let byNumber = fieldsByNumber.get(desc);
  if (byNumber === undefined) {
    byNumber = new Map(desc.fields.map((f) => [f.number, f]));
    fieldsByNumber.set(desc, byNumber);
  }
  return byNumber.get(no);
}

function messageFrame(desc: DescMessage, end: number): Frame {
  return {
    end,
    isMessage: true,
    child(no) {
      const field = fieldOf(desc, no);
      switch (field?.fieldKind) {
        case "message":
          return field.message;
        case "list":
          return field.listKind === "message" ? field.message : undefined;
        case "map":
          return { mapValue: field.mapKind === "message" ? field.message : undefined };
        default:
          return undefined;
      }
    },
  };
}

function entryFrame(value: DescMessage | undefined, end: number): Frame {
  return { end, isMessage: false, child: (no) => (no === 2 ? value : undefined) };
}

/**
 * Walks a binary message by its descriptor without decoding it, on a stack of
 * its own (no recursion): "too_deep" when messages nest deeper than
 * `maxDepth` (counted as protobuf-es counts them), "malformed" when the bytes
 * are not the wire format (a length past its end, a cut varint, an unknown
 * wire type). protobuf-es throws on either from inside the framework, before
 * any interceptor: the caller got INTERNAL and nothing was logged. Found here,
 * the call is refused INVALID_ARGUMENT like any bad request. Groups (wire
 * types 3 and 4, which proto3 never writes) are left to the decoder.
 */
export function protoShape(desc: DescMessage, bytes: Uint8Array, maxDepth: number): ProtoShape {
  let pos = 0;
  const varint = (): number | undefined => {
    let value = 0;
    for (let shift = 0; shift < 70; shift += 7) {
      if (pos >= bytes.length) return undefined;
      const b = bytes[pos++]!;
      value += (b & 0x7f) * 2 ** shift;
      if ((b & 0x80) === 0) return value;
    }
    return undefined;
  };
  const frames: Frame[] = [messageFrame(desc, bytes.length)];
  let depth = 1;
  while (frames.length > 0) {
    const frame = frames[frames.length - 1]!;
    if (pos === frame.end) {
      frames.pop();
      if (frame.isMessage) depth--;
      continue;
    }
    const tag = varint();
    if (tag === undefined) return "malformed";
    switch (tag % 8) {
      case 0:
        if (varint() === undefined) return "malformed";
        break;
      case 1:
        pos += 8;
        break;
      case 5:
        pos += 4;
        break;
      case 2: {
        const length = varint();
        if (length === undefined || pos + length > frame.end) return "malformed";
        const child = frame.child(Math.floor(tag / 8));
        if (child === undefined) pos += length;
        else if ("mapValue" in child) frames.push(entryFrame(child.mapValue, pos + length));
        else if (++depth > maxDepth) return "too_deep";
        else frames.push(messageFrame(child, pos + length));
        break;
      }
      case 3:
      case 4:
        return "ok";
      default:
        return "malformed";
    }
    if (pos > frame.end) return "malformed";
  }
  return "ok";
}

/** The refusal of a binary request message `protoShape` found wanting, naming the setting that bounds its depth. */
export function protoShapeProblem(shape: Exclude<ProtoShape, "ok">, maxDepth: number): ToolError {
  if (shape === "too_deep") {
    return new ToolError({
      code: "invalid_argument",
      reason: "MESSAGE_TOO_DEEP",
      message: `the request message nests messages deeper than ${maxDepth} levels (twice JSON_MAX_DEPTH, plus 8: a Struct level is two)`,
      metadata: { limit_depth: String(maxDepth) },
      violations: [{ field: "request", description: `nested deeper than ${maxDepth} message levels` }],
      hint: { message: "Flatten the data (google.protobuf.Struct values above all) and call again." },
    });
  }
  return new ToolError({
    code: "invalid_argument",
    reason: "MALFORMED_MESSAGE",
    message: "the request body is not a binary protobuf message of this RPC's request type",
    violations: [
      {
        field: "request",
        description: "not the protobuf wire format (a length past the end, a cut varint or an unknown wire type)",
      },
    ],
    hint: {
      message:
        "Encode the request with the RPC's generated message type, or send JSON with content-type application/json.",
    },
  });
}

/** Protobuf-es's and our depth limit for binary request messages: a JSON body within JSON_MAX_DEPTH fits in binary too. */
export function protoMaxDepth(jsonMaxDepth: number): number {
  return 2 * jsonMaxDepth + 8;
}
