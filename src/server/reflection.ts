import {
  create,
  type DescFile,
  type DescMessage,
  type DescService,
  fromBinary,
  type MessageInitShape,
  toBinary,
} from "@bufbuild/protobuf";
import { FileDescriptorProtoSchema, FileDescriptorSetSchema } from "@bufbuild/protobuf/wkt";
import type { ConnectRouter } from "@connectrpc/connect";
import {
  ServerReflection,
  type ServerReflectionRequest,
  ServerReflectionRequestSchema,
  type ServerReflectionResponse,
  ServerReflectionResponseSchema,
} from "../../gen/grpc/reflection/v1/reflection_pb";
import {
  ServerReflection as ServerReflectionV1Alpha,
  ServerReflectionRequestSchema as V1AlphaRequestSchema,
  ServerReflectionResponseSchema as V1AlphaResponseSchema,
} from "../../gen/grpc/reflection/v1alpha/reflection_pb";
import type { ToolingStreams } from "./tooling-streams";

const NOT_FOUND = 5;
const INVALID_ARGUMENT = 3;

/**
 * Reads a FileDescriptorSet (`buf build --as-file-descriptor-set`, which keeps
 * the comments) into encoded files by name. protoc-gen-es embeds descriptors
 * without comments; serving these instead lets `grpcurl describe` show callers
 * the documentation written in proto/.
 */
export function documentedDescriptors(setBytes: Uint8Array): Map<string, Uint8Array> {
  const set = fromBinary(FileDescriptorSetSchema, setBytes);
  return new Map(set.file.map((f) => [f.name, toBinary(FileDescriptorProtoSchema, f)]));
}

/**
 * The descriptors reflection serves: every file of the given services and
 * extra files (error-detail types), with their dependencies, indexed by file
 * name and by fully qualified symbol.
 */
class DescriptorIndex {
  readonly serviceNames: string[];
  private readonly files = new Map<string, DescFile>();
  private readonly symbols = new Map<string, DescFile>();
  private readonly encoded = new Map<string, Uint8Array>();
  private readonly messageTypes = new Set<string>();

  constructor(
    services: readonly DescService[],
    extraFiles: readonly DescFile[],
    private readonly documented: ReadonlyMap<string, Uint8Array>,
  ) {
    this.serviceNames = services.map((s) => s.typeName);
    for (const s of services) this.addFile(s.file);
    for (const f of extraFiles) this.addFile(f);
  }

  private addFile(file: DescFile): void {
    if (this.files.has(file.proto.name)) return;
    this.files.set(file.proto.name, file);
    this.encoded.set(
      file.proto.name,
      this.documented.get(file.proto.name) ?? toBinary(FileDescriptorProtoSchema, file.proto),
    );
    for (const dep of file.dependencies) this.addFile(dep);
    const addMessage = (m: DescMessage) => {
      this.symbols.set(m.typeName, file);
      this.messageTypes.add(m.typeName);
      for (const nested of m.nestedMessages) addMessage(nested);
      for (const e of m.nestedEnums) this.symbols.set(e.typeName, file);
      for (const x of m.nestedExtensions) this.symbols.set(x.typeName, file);
    };
    for (const m of file.messages) addMessage(m);
    for (const e of file.enums) this.symbols.set(e.typeName, file);
    for (const x of file.extensions) this.symbols.set(x.typeName, file);
    for (const s of file.services) {
      this.symbols.set(s.typeName, file);
      for (const m of s.methods) this.symbols.set(`${s.typeName}.${m.name}`, file);
    }
  }

  fileByName(name: string): DescFile | undefined {
    return this.files.get(name);
  }

  fileBySymbol(symbol: string): DescFile | undefined {
    return this.symbols.get(symbol.replace(/^\./, ""));
  }

  isMessage(typeName: string): boolean {
    return this.messageTypes.has(typeName.replace(/^\./, ""));
  }

  /** The file and its transitive dependencies not yet in `sent`, encoded; marks them sent. */
  encodeWithDeps(file: DescFile, sent: Set<string>): Uint8Array[] {
    const out: Uint8Array[] = [];
    const visit = (f: DescFile, force: boolean) => {
      if (sent.has(f.proto.name) && !force) return;
      sent.add(f.proto.name);
      out.push(this.encoded.get(f.proto.name)!);
      for (const dep of f.dependencies) visit(dep, false);
    };
    // The requested file is always sent, even when an earlier answer on this stream carried it.
    visit(file, true);
    return out;
  }
}

type ResponseInit = MessageInitShape<typeof ServerReflectionResponseSchema>;

function answer(index: DescriptorIndex, req: ServerReflectionRequest, sent: Set<string>): ServerReflectionResponse {
  return create(ServerReflectionResponseSchema, {
    validHost: req.host,
    originalRequest: req,
    messageResponse: respond(index, req, sent),
  });
}

function respond(
  index: DescriptorIndex,
  req: ServerReflectionRequest,
  sent: Set<string>,
): ResponseInit["messageResponse"] {
  const notFound = (what: string): ResponseInit["messageResponse"] => ({
    case: "errorResponse",
    value: { errorCode: NOT_FOUND, errorMessage: `${what} not found` },
  });
  const files = (file: DescFile): ResponseInit["messageResponse"] => ({
    case: "fileDescriptorResponse",
    value: { fileDescriptorProto: index.encodeWithDeps(file, sent) },
  });
  const r = req.messageRequest;
  switch (r.case) {
    case "listServices":
      return { case: "listServicesResponse", value: { service: index.serviceNames.map((name) => ({ name })) } };
    case "fileByFilename": {
      const file = index.fileByName(r.value);
      return file ? files(file) : notFound(`file "${r.value}"`);
    }
    case "fileContainingSymbol": {
      const file = index.fileBySymbol(r.value);
      return file ? files(file) : notFound(`symbol "${r.value}"`);
    }
    case "fileContainingExtension":
      // No served type is extended.
      return notFound(`extension ${r.value.extensionNumber} of "${r.value.containingType}"`);
    case "allExtensionNumbersOfType":
      return index.isMessage(r.value)
        ? {
            case: "allExtensionNumbersResponse",
            value: { baseTypeName: r.value.replace(/^\./, ""), extensionNumber: [] },
          }
        : notFound(`type "${r.value}"`);
    default:
      return {
        case: "errorResponse",
        value: { errorCode: INVALID_ARGUMENT, errorMessage: "empty reflection request" },
      };
  }
}

/**
 * Registers grpc.reflection.v1 and v1alpha ServerReflection, so `grpcurl` and
 * `buf curl --reflect` can list and describe every service and decode error
 * details. Files found in `documented` are served with their comments. Each stream counts against `streams`. Each stream remembers which files it sent, so dependencies go once
 * per stream (as grpc-go does). v1alpha has the same wire format as v1: its
 * messages are re-read as v1 and answered by the same code.
 */
export function registerReflection(
  router: ConnectRouter,
  streams: ToolingStreams,
  services: readonly DescService[],
  extraFiles: readonly DescFile[],
  documented: ReadonlyMap<string, Uint8Array> = new Map(),
): void {
  const index = new DescriptorIndex([...services, ServerReflection, ServerReflectionV1Alpha], extraFiles, documented);

  router.service(ServerReflection, {
    async *serverReflectionInfo(requests) {
      const release = streams.take("ServerReflectionInfo");
      try {
        const sent = new Set<string>();
        for await (const req of requests) {
          yield answer(index, req, sent);
        }
      } finally {
        release();
      }
    },
  });

  router.service(ServerReflectionV1Alpha, {
    async *serverReflectionInfo(requests) {
      const release = streams.take("ServerReflectionInfo");
      try {
        const sent = new Set<string>();
        for await (const alphaReq of requests) {
          const req = fromBinary(ServerReflectionRequestSchema, toBinary(V1AlphaRequestSchema, alphaReq));
          yield fromBinary(V1AlphaResponseSchema, toBinary(ServerReflectionResponseSchema, answer(index, req, sent)));
        }
      } finally {
        release();
      }
    },
  });
}
