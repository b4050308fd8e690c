import { z } from "zod";
import { zodText } from "../../../errors/text";
import { pathId } from "../../../upstream/path-ids";

/** Instances one call may name. */
export const MAX_ACTION_INSTANCES = 1000;

/** One instance: a map of every primary key to its value. */
export const identitySchema = z.record(
  z.string(),
  z.union([z.string(), z.number(), z.boolean()], {
    error: zodText(
      "primary key values are strings, numbers or booleans, copied from an _instance_identity",
      "主键的值是字符串、数字或布尔值，取自 _instance_identity",
    ),
  }),
);

const AT_ID_REQUIRED = zodText(
  "required: an action type id from search_schema's action_types",
  "必填：search_schema 返回的 action_types 中的行动类型id",
);

/** Input of GetActionInfo (the platform's get_action_info). */
export const getActionInfoInput = z.object({
  kn_id: z.string().trim().default("").describe("业务知识网络 ID，如 kn_medical；不传时使用连接的 x-kn-id 请求头"),
  at_id: pathId(z.string({ error: AT_ID_REQUIRED }).trim().min(1, AT_ID_REQUIRED)).describe(
    "行动类型 ID，取自 search_schema 返回的 action_types，如 generate_treatment_plan",
  ),
  instance_identities: z
    .array(identitySchema)
    .max(
      MAX_ACTION_INSTANCES,
      zodText(`at most ${MAX_ACTION_INSTANCES} instances`, `最多 ${MAX_ACTION_INSTANCES} 个实例`),
    )
    .default([])
    // An empty map names no instance (the platform's tool drops them too).
    .transform((list) => list.filter((identity) => Object.keys(identity).length > 0))
    .describe(
      '要执行行动的实例，每个一个完整的主键映射，必须原样取自 query_object_instance 或 query_instance_subgraph 返回的 _instance_identity，不可臆造，如 [{"disease_id": "disease_000001"}]',
    ),
});
export type GetActionInfoInput = z.output<typeof getActionInfoInput>;

/** The tool's arguments as the platform's get_action_info names them: `_instance_identities`. */
export const getActionInfoToolInput = getActionInfoInput
  .omit({ instance_identities: true })
  .extend({ _instance_identities: getActionInfoInput.shape.instance_identities })
  .transform(({ _instance_identities, ...rest }) => ({ ...rest, instance_identities: _instance_identities }));

/**
 * The REST body, as the platform's route takes it: `_instance_identities`, or
 * the older single `_instance_identity` (used only when the list is empty).
 */
export const getActionInfoBody = getActionInfoInput
  .omit({ instance_identities: true })
  .extend({
    _instance_identities: getActionInfoInput.shape.instance_identities,
    _instance_identity: identitySchema.optional().describe("旧写法：单个实例"),
  })
  .strict()
  .transform(({ _instance_identities, _instance_identity, ...rest }) => ({
    ...rest,
    instance_identities:
      _instance_identities.length === 0 && _instance_identity && Object.keys(_instance_identity).length > 0
        ? [_instance_identity]
        : _instance_identities,
  }));
