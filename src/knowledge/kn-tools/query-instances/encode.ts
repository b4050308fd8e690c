import { create, type JsonObject } from "@bufbuild/protobuf";
import {
  type QueryObjectInstancesResponse,
  QueryObjectInstancesResponseSchema,
} from "../../../../gen/contextloader/kntools/v1/kntools_pb";
import { type OutputFormat, render } from "../../../core/output-format";
import { instancesAnswer } from "./answer";
import type { InstancesPage } from "./query-instances";

/** The structured answer: the rows as they are, the total, the next cursor. */
export function instancesResponse(page: InstancesPage): QueryObjectInstancesResponse {
  return create(QueryObjectInstancesResponseSchema, {
    datas: page.datas as unknown as JsonObject[],
    ...(page.total_count !== undefined ? { totalCount: BigInt(page.total_count) } : {}),
    nextCursor: page.next_cursor,
    message: page.message,
  });
}

/** With output_format: the compact answer in `text`, and beside it what the next call needs (cursor, total). */
export function instancesTextResponse(page: InstancesPage, format: OutputFormat): QueryObjectInstancesResponse {
  return create(QueryObjectInstancesResponseSchema, {
    ...(page.total_count !== undefined ? { totalCount: BigInt(page.total_count) } : {}),
    nextCursor: page.next_cursor,
    text: render(instancesAnswer(page), format),
  });
}

/** The REST answer: the anchor's `{datas}`, plus total_count, next_cursor and message. */
export function instancesJson(page: InstancesPage): Record<string, unknown> {
  return {
    datas: page.datas,
    ...(page.total_count !== undefined ? { total_count: page.total_count } : {}),
    next_cursor: page.next_cursor,
    ...(page.message !== "" ? { message: page.message } : {}),
  };
}
