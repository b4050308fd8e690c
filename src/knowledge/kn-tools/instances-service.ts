import { type DescMessage, type MessageShape, toJson } from "@bufbuild/protobuf";
import type { ServiceImpl } from "@connectrpc/connect";
import type { z } from "zod";
import {
  type KnowledgeToolsService,
  QueryInstanceSubgraphRequestSchema,
  QueryObjectInstancesRequestSchema,
} from "../../../gen/contextloader/kntools/v1/kntools_pb";
import { type OutputFormat, outputFormatField } from "../../core/output-format";
import { text } from "../../errors/text";
import { invalidArgument } from "../../errors/tool-error";
import { safeParseBoth, violationsOf } from "../../errors/validation";
import { callContext } from "../../server/interceptors";
import type { KnowledgeDeps } from "../deps";
import { instancesResponse, instancesTextResponse } from "./query-instances/encode";
import { queryObjectInstancesInput } from "./query-instances/input";
import { queryObjectInstances } from "./query-instances/query-instances";
import { subgraphResponse, subgraphTextResponse } from "./subgraph/encode";
import { queryInstanceSubgraphInput } from "./subgraph/input";
import { queryInstanceSubgraph } from "./subgraph/query-subgraph";

/** QueryObjectInstances and QueryInstanceSubgraph: the RPC handlers. */
export function instanceHandlers(deps: KnowledgeDeps): Partial<ServiceImpl<typeof KnowledgeToolsService>> {
  return {
    async queryObjectInstances(req, ctx) {
      const { input, format } = decode(QueryObjectInstancesRequestSchema, req, queryObjectInstancesInput);
      const page = await queryObjectInstances(deps, callContext(ctx), input);
      return format === undefined ? instancesResponse(page) : instancesTextResponse(page, format);
    },
    async queryInstanceSubgraph(req, ctx) {
      const { input, format } = decode(QueryInstanceSubgraphRequestSchema, req, queryInstanceSubgraphInput);
      const answer = await queryInstanceSubgraph(deps, callContext(ctx), input);
      return format === undefined ? subgraphResponse(answer) : subgraphTextResponse(answer, format);
    },
  };
}

/**
 * The request as the tools' input: proto JSON with the proto field names and
 * every field left at its zero value absent. Conditions nest, and a node's
 * unset field, value_from or sub_conditions must read as "not given", as in a
 * JSON or MCP call, not as "" or []; absent arguments get the schema's
 * defaults. The output_format is read apart; problems with both are reported
 * together.
 */
function decode<D extends DescMessage, S extends z.ZodType>(
  desc: D,
  message: MessageShape<D>,
  schema: S,
): { input: z.output<S>; format: OutputFormat | undefined } {
  let json: Record<string, unknown>;
  try {
    json = toJson(desc, message, { useProtoFieldName: true }) as Record<string, unknown>;
  } catch (err) {
    // Binary proto can carry what JSON cannot (NaN in a Value): the request is bad, not the server.
    throw invalidArgument([
      {
        field: "request",
        description: text(
          `not representable as JSON: ${(err as Error).message}`,
          `无法表示为 JSON：${(err as Error).message}`,
        ),
      },
    ]);
  }
  const { output_format, ...rest } = json;
  const format = safeParseBoth(outputFormatField, output_format);
  const input = safeParseBoth(schema, rest);
  if (format.success && input.success) return { input: input.data, format: format.data };
  throw invalidArgument([
    ...(format.success ? [] : violationsOf(format.error).map((v) => ({ ...v, field: "output_format" }))),
    ...(input.success ? [] : violationsOf(input.error)),
  ]);
}
