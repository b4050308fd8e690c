import type { CallContext } from "../../../core/call-context";
import { topIndexes } from "../../../core/scores";
import { text } from "../../../errors/text";
import { ToolError } from "../../../errors/tool-error";
import type { MetricDefinition } from "../../../kn/concepts";
import type { ObjectType } from "../../../kn/types";
import { rankWithoutLlm } from "../../relevance/rank";
import { textSearchCondition } from "./text-condition";
import type { SchemaWarning, SearchSchemaDeps } from "./types";

/** What being scoped to a selected object type adds to a metric's relevance (0..1). */
const SELECTED_SCOPE_BONUS = 0.2;

/** A metric as SearchSchema returns it: its definition, and the logic property that evaluates it. */
export interface RecalledMetric extends MetricDefinition {
  /** The logic property of `scope_ref` whose data source is this metric ("" when none is). */
  logic_property: string;
}

export interface MetricRecall {
  /** The question. */
  query: string;
  knId: string;
  conceptGroups: string[];
  max: number;
  /** The object types SearchSchema selected: their metrics are recalled even when their words differ. */
  objectTypeIds: string[];
  /** Every object type definition already read, by id. */
  types: ReadonlyMap<string, ObjectType>;
  rank: boolean;
}

/**
 * The metrics of a question: those whose name or description matches it
 * (the platform's vector and full-text search, within the concept groups),
 * then those scoped to the selected object types; merged by id, ranked like
 * the other concepts with a bonus for being scoped to a selected type (unless
 * ranking is off: then the platform's order, direct hits first), at most `max`. A failing
 * direct search fails the call, with the way around it in the hint; a failing
 * expansion or linking is a warning.
 */
export async function recallMetrics(
  deps: SearchSchemaDeps,
  ctx: CallContext,
  r: MetricRecall,
): Promise<{ metrics: RecalledMetric[]; warnings: SchemaWarning[] }> {
  const warnings: SchemaWarning[] = [];
  const direct = await deps.backend
    .searchConcepts(ctx, r.knId, "metrics", {
      condition: textSearchCondition(r.query, r.max),
      concept_groups: r.conceptGroups,
      limit: r.max,
    })
    .catch((err: unknown) => {
      throw err instanceof ToolError ? withWayAround(err) : err;
    });
  let scoped: MetricDefinition[] = [];
  if (r.objectTypeIds.length > 0) {
    try {
      scoped = await deps.backend.searchConcepts(ctx, r.knId, "metrics", {
        condition: {
          operation: "and",
          sub_conditions: [
            { field: "scope_type", operation: "==", value: "object_type", value_from: "const" },
            { field: "scope_ref", operation: "in", value: r.objectTypeIds, value_from: "const" },
          ],
        },
        concept_groups: r.conceptGroups,
        limit: r.max,
      });
    } catch (err) {
      if (!(err instanceof ToolError)) throw err;
      warnings.push({
        target: "metric_types",
        reason: err.reason,
        message: text(
          `the metrics of the selected object types could not be searched (${err.text.en}); only metrics matching the question's words are returned`,
          `无法搜索所选对象类型的指标（${err.text.zh}）；只返回与问题中的词匹配的指标`,
        )[ctx.language],
      });
    }
  }
  const byId = new Map<string, MetricDefinition>();
  for (const m of [...direct, ...scoped]) if (!byId.has(m.id)) byId.set(m.id, stripScore(m));
  const merged = [...byId.values()];
  const types = await scopeTypes(deps, ctx, r, merged, warnings);
  let order = merged.map((_, i) => i);
  if (r.rank && merged.length > 0) {
    const ranking = await rankWithoutLlm(
      ctx,
      r.query,
      merged.map((m) => {
        const scope = types.get(m.scope_ref);
        return {
          text: `${m.name} ${m.comment} ${scope?.name ?? m.scope_ref} ${m.analysis_dimensions.join(" ")}`,
          names: [m.name, m.id],
        };
      }),
      deps,
    );
    warnings.push(...ranking.warnings.filter((w) => w.reason !== "NO_RELEVANCE_SIGNAL"));
    // A metric of an object type the question selected is relevant for that alone.
    const selected = new Set(r.objectTypeIds);
    const scores = ranking.scores.map((s, i) => s + (selected.has(merged[i]!.scope_ref) ? SELECTED_SCOPE_BONUS : 0));
    order = topIndexes(scores, merged.length);
  }
  return {
    metrics: order.slice(0, r.max).map((i) => {
      const m = merged[i]!;
      return { ...m, logic_property: evaluatedBy(types.get(m.scope_ref), m.id) };
    }),
    warnings,
  };
}

/** The definitions of the metrics' object types, reading those not yet read; one that cannot be read is a warning. */
async function scopeTypes(
  deps: SearchSchemaDeps,
  ctx: CallContext,
  r: MetricRecall,
  metrics: MetricDefinition[],
  warnings: SchemaWarning[],
): Promise<ReadonlyMap<string, ObjectType>> {
  const missing = [
    ...new Set(
      metrics.filter((m) => m.scope_type === "object_type" && !r.types.has(m.scope_ref)).map((m) => m.scope_ref),
    ),
  ];
  if (missing.length === 0) return r.types;
  try {
    const fetched = await deps.backend.getObjectTypes(ctx, r.knId, missing);
    return new Map([...r.types, ...fetched.map((t) => [t.id, t] as const)]);
  } catch (err) {
    if (!(err instanceof ToolError)) throw err;
    warnings.push({
      target: "metric_types",
      reason: err.reason,
      message: text(
        `the object types ${missing.join(", ")} of some metrics could not be read (${err.text.en}); their logic_property is left empty`,
        `无法读取部分指标的对象类型 ${missing.join(", ")}（${err.text.zh}）；它们的 logic_property 留空`,
      )[ctx.language],
    });
    return r.types;
  }
}

/** The metric logic property of `type` whose data source is the metric. */
function evaluatedBy(type: ObjectType | undefined, metricId: string): string {
  return type?.logic_properties.find((lp) => lp.type === "metric" && lp.data_source.id === metricId)?.name ?? "";
}

function stripScore(m: MetricDefinition & { _score?: number }): MetricDefinition {
  const { _score, ...rest } = m;
  return rest;
}

/** The platform's metric search failed: the agent can still have the rest of the schema. */
function withWayAround(err: ToolError): ToolError {
  return new ToolError({
    code: err.code,
    reason: err.reason,
    message: text(`metric types could not be searched: ${err.text.en}`, `无法搜索指标类型：${err.text.zh}`),
    violations: err.violations,
    metadata: err.metadata,
    hint: {
      message: text(
        `${err.hint?.message.en ?? ""} To get the other concept types now, call again with search_scope.include_metric_types=false.`.trim(),
        `${err.hint?.message.zh ?? ""}要现在获取其他概念类型，请用 search_scope.include_metric_types=false 再调用。`,
      ),
    },
    cause: err,
  });
}
