import { create } from "@bufbuild/protobuf";
import { type FindSkillsResponse, FindSkillsResponseSchema } from "../../../../gen/contextloader/kntools/v1/kntools_pb";
import { type OutputFormat, render } from "../../../core/output-format";
import { findSkillsAnswer } from "./answer";
import type { FindSkillsResult } from "./find-skills";

/** The RPC's answer. */
export function findSkillsResponse(r: FindSkillsResult): FindSkillsResponse {
  return create(FindSkillsResponseSchema, {
    entries: r.entries.map((s) => ({ skillId: s.skill_id, name: s.name, description: s.description })),
    message: r.message,
  });
}

/** The answer asked for with output_format: the compact answer in `text`, and the message. */
export function findSkillsTextResponse(r: FindSkillsResult, format: OutputFormat): FindSkillsResponse {
  return create(FindSkillsResponseSchema, { message: r.message, text: render(findSkillsAnswer(r), format) });
}
