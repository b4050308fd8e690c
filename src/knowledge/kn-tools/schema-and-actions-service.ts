import type { ServiceImpl } from "@connectrpc/connect";
import {
  FindSkillsRequestSchema,
  GetActionInfoRequestSchema,
  type KnowledgeToolsService,
  SearchSchemaRequestSchema,
} from "../../../gen/contextloader/kntools/v1/kntools_pb";
import { validateFormattedRequest } from "../../errors/validation";
import { callContext } from "../../server/interceptors";
import type { KnowledgeDeps } from "../deps";
import { actionInfoResponse, actionInfoTextResponse } from "./action-info/encode";
import { getActionInfo } from "./action-info/get-action-info";
import { getActionInfoInput } from "./action-info/input";
import { findSkillsResponse, findSkillsTextResponse } from "./find-skills/encode";
import { findSkills } from "./find-skills/find-skills";
import { findSkillsInput } from "./find-skills/input";
import { searchSchemaResponse, searchSchemaTextResponse } from "./search-schema/encode";
import { searchSchemaInput } from "./search-schema/input";
import { searchSchema } from "./search-schema/search-schema";

/**
 * SearchSchema, GetActionInfo and FindSkills: the RPC handlers. Each
 * validates the request, runs the domain function, and encodes the answer:
 * structured, or with output_format the compact answer in `text`.
 */
export function schemaAndActionHandlers(deps: KnowledgeDeps): Partial<ServiceImpl<typeof KnowledgeToolsService>> {
  return {
    async searchSchema(req, ctx) {
      const { input, format } = validateFormattedRequest(SearchSchemaRequestSchema, req, searchSchemaInput);
      const result = await searchSchema(deps, callContext(ctx), input);
      return format === undefined ? searchSchemaResponse(result) : searchSchemaTextResponse(result, format);
    },
    async getActionInfo(req, ctx) {
      const { input, format } = validateFormattedRequest(GetActionInfoRequestSchema, req, getActionInfoInput);
      const result = await getActionInfo(deps, callContext(ctx), input);
      return format === undefined ? actionInfoResponse(result) : actionInfoTextResponse(result, format);
    },
    async findSkills(req, ctx) {
      const { input, format } = validateFormattedRequest(FindSkillsRequestSchema, req, findSkillsInput);
      const result = await findSkills(deps, callContext(ctx), input);
      return format === undefined ? findSkillsResponse(result) : findSkillsTextResponse(result, format);
    },
  };
}
