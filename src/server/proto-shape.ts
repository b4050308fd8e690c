import { type DescField, type DescMessage, ScalarType } from "@bufbuild/protobuf";
import { text } from "../errors/text";
import { invalidArgument, ToolError } from "../errors/tool-error";

/**
 * What a look at a binary message found before it is decoded; `wrongType` names a known field sent with
 * a wire type its type never has (a string where an integer goes), as the JSON routes name it.
 */
export type ProtoShape = "ok" | "too_deep" | "malformed" | { wrongType: string };

/** One message (or map entry) open in the walk: where it ends, and the message each length-delimited field holds. */
interface Frame {
  end: number;
  /** A map entry is not a level of nesting (protobuf-es does not count it either). */
  isMessage: boolean;
  /** The message field `no` holds; "entry" for a map field's entries; undefined for scalars, strings, bytes. */
  child(no: number): DescMessage | { mapValue: DescMessage | undefined } | undefined;
  /** The name of field `no` when `wireType` can never carry it (a map entry's fields are not checked). */
  wrongWire(no: number, wireType: number): string | undefined;
}

/** The wire type each scalar is written with (a packed repeated scalar is also 2). */
function scalarWireType(scalar: ScalarType): number {
  switch (scalar) {
    case ScalarType.STRING:
    case ScalarType.BYTES:
      return 2;
    case ScalarType.DOUBLE:
    case ScalarType.FIXED64:
    case ScalarType.SFIXED64:
      return 1;
    case ScalarType.FLOAT:
    case ScalarType.FIXED32:
    case ScalarType.SFIXED32:
      return 5;
    default:
      return 0;
  }
}

function acceptsWire(field: DescField, wireType: number): boolean {
  switch (field.fieldKind) {
    case "scalar":
      return wireType === scalarWireType(field.scalar);
    case "enum":
      return wireType === 0;
    case "list":
      if (field.listKind === "scalar") return wireType === 2 || wireType === scalarWireType(field.scalar);
      return field.listKind === "enum" ? wireType === 0 || wireType === 2 : wireType === 2;
    default:
      return wireType === 2;
  }
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

function messageFrame(desc: DescMessage, end: number, top: boolean): Frame {
  return {
    end,
    isMessage: true,
    wrongWire(no, wireType) {
      const field = fieldOf(desc, no);
      if (field === undefined || acceptsWire(field, wireType)) return undefined;
      return top ? field.name : `${desc.typeName}.${field.name}`;
    },
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
  return { end, isMessage: false, child: (no) => (no === 2 ? value : undefined), wrongWire: () => undefined };
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
  const frames: Frame[] = [messageFrame(desc, bytes.length, true)];
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
    if (tag % 8 <= 5) {
      const wrong = frame.wrongWire(Math.floor(tag / 8), tag % 8);
      if (wrong !== undefined) return { wrongType: wrong };
    }
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
        else frames.push(messageFrame(child, pos + length, false));
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
  if (typeof shape === "object") {
    return invalidArgument(
      [
        {
          field: shape.wrongType,
          description: text(
            "wrong type for this field: its value is encoded as another type (the request message does not match this RPC's)",
            "字段类型不对：它的值按另一种类型编码（请求消息与这个 RPC 的不符）",
          ),
        },
      ],
      {
        message: text(
          "Build the request with the RPC's generated message type and the field's declared type, then call again.",
          "用这个 RPC 生成的消息类型、按字段声明的类型构造请求后再调用。",
        ),
      },
    );
  }
  if (shape === "too_deep") {
    return new ToolError({
      code: "invalid_argument",
      reason: "MESSAGE_TOO_DEEP",
      message: text(
        `the request message nests messages deeper than ${maxDepth} levels (twice JSON_MAX_DEPTH, plus 8: a Struct level is two)`,
        `请求消息的嵌套深度超过 ${maxDepth} 层（JSON_MAX_DEPTH 的两倍加 8：Struct 的一层算两层）`,
      ),
      metadata: { limit_depth: String(maxDepth) },
      violations: [
        {
          field: "request",
          description: text(`nested deeper than ${maxDepth} message levels`, `嵌套超过 ${maxDepth} 层消息`),
        },
      ],
      hint: {
        message: text(
          "Flatten the data (google.protobuf.Struct values above all) and call again.",
          "把数据（尤其是 google.protobuf.Struct 的值）展平后再调用。",
        ),
      },
    });
  }
  return new ToolError({
    code: "invalid_argument",
    reason: "MALFORMED_MESSAGE",
    message: text(
      "the request body is not a binary protobuf message of this RPC's request type",
      "请求体不是这个 RPC 请求类型的二进制 protobuf 消息",
    ),
    violations: [
      {
        field: "request",
        description: text(
          "not the protobuf wire format (a length past the end, a cut varint or an unknown wire type)",
          "不是 protobuf 线格式（长度越过末尾、varint 被截断或未知的线类型）",
        ),
      },
    ],
    hint: {
      message: text(
        "Encode the request with the RPC's generated message type, or send JSON with content-type application/json.",
        "用这个 RPC 生成的消息类型编码请求，或以 content-type application/json 发送 JSON。",
      ),
    },
  });
}

/** Protobuf-es's and our depth limit for binary request messages: a JSON body within JSON_MAX_DEPTH fits in binary too. */
export function protoMaxDepth(jsonMaxDepth: number): number {
  return 2 * jsonMaxDepth + 8;
}
