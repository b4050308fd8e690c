import type { Json } from "../core/json";
import { compact, table } from "../core/tables";
import type { ResolveResult } from "./resolve";

interface Series {
  labels?: Record<string, Json>;
  times: Json[];
  values: Json[];
}

/** A metric's value as ontology-query returns it: its model, step and flags, and series of times and values. */
interface MetricValue {
  model?: Record<string, Json>;
  datas: Series[];
  [key: string]: Json | undefined | Series[];
}

function isMetricValue(v: Json | undefined): v is MetricValue & Json {
  if (v === null || typeof v !== "object" || Array.isArray(v)) return false;
  const datas = v["datas"];
  return (
    Array.isArray(datas) &&
    datas.every(
      (s) =>
        s !== null &&
        typeof s === "object" &&
        !Array.isArray(s) &&
        Array.isArray(s["times"]) &&
        Array.isArray(s["values"]),
    )
  );
}

/**
 * The resolver's answer in the compact shape tools return. Rows are the
 * platform's (one per identity, request order), with the identity's keys as
 * columns (`identity_keys` names them) instead of a nested map; a metric's
 * value becomes rows of `points` (row, property, its labels, time in ms,
 * value) with what its series share (unit, step, flags) said once in
 * `metrics`. Operator results and anything else stay as they came.
 */
export function resolveAnswer(r: ResolveResult): Json {
  const identityKeys = new Set<string>();
  /** What each row's metric value says beside its series, by property. */
  const metricInfo = new Map<string, { row: number; info: Record<string, Json> }[]>();
  const points: Record<string, Json>[] = [];
  const rows = r.datas.map((data, index) => {
    const row: Record<string, Json> = { row: index };
    const identity = data["_instance_identity"];
    for (const [key, value] of Object.entries(data)) {
      if (
        key === "_instance_identity" &&
        identity !== null &&
        typeof identity === "object" &&
        !Array.isArray(identity)
      ) {
        for (const [k, v] of Object.entries(identity)) {
          identityKeys.add(k);
          row[k] = v;
        }
      } else if (isMetricValue(value)) {
        const { model, datas, ...shared } = value as MetricValue;
        const info = { ...(model ?? {}), ...(shared as Record<string, Json>) };
        metricInfo.set(key, [...(metricInfo.get(key) ?? []), { row: index, info }]);
        for (const series of datas) {
          series.times.forEach((time, i) => {
            points.push({
              row: index,
              property: key,
              ...labelsBeyond(series.labels, row),
              time,
              value: series.values[i] ?? null,
            });
          });
        }
      } else if (!(key in row)) {
        row[key] = value;
      }
    }
    return row;
  });
  return compact({
    identity_keys: [...identityKeys],
    rows: table(rows),
    metrics: table(metricsTable(metricInfo)),
    points: table(points),
    unmatched_identities: r.unmatched_identities,
    ...(r.debug ? { debug: r.debug as unknown as Json } : {}),
    trace_id: r.trace_id,
  });
}

/** One line per metric property when every row says the same of it; else one per row and property. */
function metricsTable(byProperty: Map<string, { row: number; info: Record<string, Json> }[]>): Record<string, Json>[] {
  return [...byProperty].flatMap(([property, entries]) => {
    const first = JSON.stringify(entries[0]?.info);
    return entries.every((e) => JSON.stringify(e.info) === first)
      ? [{ property, ...entries[0]!.info }]
      : entries.map((e) => ({ row: e.row, property, ...e.info }));
  });
}

/** A series' labels, less those that only repeat the row's own columns (its identity). */
function labelsBeyond(labels: Record<string, Json> | undefined, row: Record<string, Json>): Record<string, Json> {
  return Object.fromEntries(
    Object.entries(labels ?? {}).filter(([k, v]) => JSON.stringify(row[k]) !== JSON.stringify(v)),
  );
}
