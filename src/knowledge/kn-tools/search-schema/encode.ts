import { create, fromJson, type JsonValue } from "@bufbuild/protobuf";
import {
  type SearchSchemaResponse,
  SearchSchemaResponseSchema,
} from "../../../../gen/contextloader/kntools/v1/kntools_pb";
import { type OutputFormat, render } from "../../../core/output-format";
import { searchSchemaAnswer, searchSchemaJson } from "./answer";
import type { SearchSchemaResult } from "./search-schema";

/** The RPC's answer: the platform tool's JSON read as the message (the proto names its fields alike). */
export function searchSchemaResponse(r: SearchSchemaResult): SearchSchemaResponse {
  return fromJson(SearchSchemaResponseSchema, searchSchemaJson(r) as JsonValue);
}

/** The answer asked for with output_format: the compact answer written in `text`. */
export function searchSchemaTextResponse(r: SearchSchemaResult, format: OutputFormat): SearchSchemaResponse {
  return create(SearchSchemaResponseSchema, { text: render(searchSchemaAnswer(r), format) });
}
