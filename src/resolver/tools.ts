import { ResolveLogicPropertiesResponseSchema } from "../../gen/contextloader/resolver/v1/resolver_pb";
import { defineTool, type Tool } from "../core/tool";
import { resolveAnswer } from "./answer";
import { type ResolverDeps, resolveLogicProperties } from "./resolve";
import { resolveToolInput } from "./resolver-input";
import { resolveResponse } from "./resolver-service";

/** The resolver as an agent tool, under the platform's tool name. */
export const resolverTools: Tool<ResolverDeps>[] = [
  defineTool({
    name: "get_logic_properties_values",
    title: "计算实例的逻辑属性（指标、算子）",
    description: `为一批实例计算对象类型的逻辑属性（metric 指标或 operator 算子）：服务读取属性定义，由大模型根据问题里的时间、范围等生成每个属性的动态参数，再查询取值。

使用场景：问题需要实例的统计值或计算结果（"近三个月的批准药品数"），而这些值是对象类型的 logic_properties（见 retrieve_schema 或 kn_search 返回的 logic_properties）。

参数要点：kn_id 不填则用 x-kn-id 请求头；query 写用户原问题，带上时间与范围词；unique_identities（或平台写法 _instance_identities）每个实例一个主键映射，须取自检索结果的 _instance_identity，不可臆造；properties 为逻辑属性名；时间、口径等补充信息放 additional_context。

返回：datas（每个实例一行：主键与各属性的值，顺序与 unique_identities 一致）；unmatched_identities（平台没有返回的实例）。缺少参数时返回错误 MISSING_INPUT_PARAMS 并列出每个属性缺什么：向用户追问或补充 additional_context 后重试。`,
    input: resolveToolInput,
    output: ResolveLogicPropertiesResponseSchema,
    run: async (deps, ctx, input) => {
      const r = await resolveLogicProperties(deps, ctx, input);
      return { answer: resolveAnswer(r), structured: resolveResponse(r) };
    },
  }),
];
