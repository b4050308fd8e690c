import { create, fromJson, type JsonObject, type JsonValue } from "@bufbuild/protobuf";
import { ValueSchema } from "@bufbuild/protobuf/wkt";
import {
  type QueryInstanceSubgraphResponse,
  QueryInstanceSubgraphResponseSchema,
} from "../../../../gen/contextloader/kntools/v1/kntools_pb";
import { type OutputFormat, render } from "../../../core/output-format";
import { subgraphAnswer } from "./answer";
import type { SubgraphAnswer } from "./query-subgraph";

/** The structured answer: per template its objects, its paths (each relation with its direction) and total. */
export function subgraphResponse(a: SubgraphAnswer): QueryInstanceSubgraphResponse {
  return create(QueryInstanceSubgraphResponseSchema, {
    entries: a.entries.map((e) => ({
      objects: Object.fromEntries(
        Object.entries(e.objects).map(([id, o]) => [
          id,
          {
            InstanceId: o._instance_id,
            InstanceIdentity: o._instance_identity as JsonObject,
            Display: fromJson(ValueSchema, o._display as JsonValue),
            objectTypeId: o.object_type_id,
            objectTypeName: o.object_type_name,
            properties: o.properties as JsonObject,
          },
        ]),
      ),
      relationPaths: e.relation_paths.map((p) => ({
        relations: p.relations.map((r) => ({
          relationTypeId: r.relation_type_id,
          relationTypeName: r.relation_type_name,
          sourceObjectId: r.source_object_id,
          targetObjectId: r.target_object_id,
          direction: r.direction,
        })),
        length: p.length,
      })),
      ...(e.total_count !== undefined ? { totalCount: BigInt(e.total_count) } : {}),
      message: e.message,
    })),
    warnings: a.warnings,
  });
}

/** With output_format: the compact answer in `text`. */
export function subgraphTextResponse(a: SubgraphAnswer, format: OutputFormat): QueryInstanceSubgraphResponse {
  return create(QueryInstanceSubgraphResponseSchema, { text: render(subgraphAnswer(a), format) });
}

/** The REST answer: the anchor's `{entries}` (objects keyed by instance id), plus each relation's direction, totals, messages and warnings. */
export function subgraphJson(a: SubgraphAnswer): Record<string, unknown> {
  return {
    entries: a.entries.map((e) => ({
      objects: e.objects,
      relation_paths: e.relation_paths,
      ...(e.total_count !== undefined ? { total_count: e.total_count } : {}),
      ...(e.message !== "" ? { message: e.message } : {}),
    })),
    ...(a.warnings.length > 0 ? { warnings: a.warnings } : {}),
  };
}
