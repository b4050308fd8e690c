import type { JsonObject } from "@bufbuild/protobuf";
import { create } from "@bufbuild/protobuf";
import {
  type GetActionInfoResponse,
  GetActionInfoResponseSchema,
} from "../../../../gen/contextloader/kntools/v1/kntools_pb";
import { type OutputFormat, render } from "../../../core/output-format";
import { actionInfoAnswer } from "./answer";
import type { ActionInfoResult } from "./get-action-info";

/** The RPC's answer. */
export function actionInfoResponse(r: ActionInfoResult): GetActionInfoResponse {
  return create(GetActionInfoResponseSchema, {
    headers: r.headers,
    DynamicTools: r.dynamic_tools.map((t) => ({
      name: t.name,
      description: t.description,
      parameters: t.parameters as JsonObject,
      apiUrl: t.api_url,
      fixedParams: t.fixed_params as unknown as JsonObject,
      apiCallStrategy: t.api_call_strategy,
    })),
    message: r.message,
  });
}

/** The answer asked for with output_format: the compact answer in `text`, and the message. */
export function actionInfoTextResponse(r: ActionInfoResult, format: OutputFormat): GetActionInfoResponse {
  return create(GetActionInfoResponseSchema, { message: r.message, text: render(actionInfoAnswer(r), format) });
}
