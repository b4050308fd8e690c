import type { GeneratedBundle } from "./build";

/**
 * Writes a bundle as stable, diff-friendly JSON: the schema sections
 * pretty-printed, then one instance, one relation pair and one metric series
 * per line. Key order is the order the builder created them in, which is fixed.
 */
export function serializeBundle(bundle: GeneratedBundle): string {
  const sections: [string, string][] = [
    ["knowledge_network", pretty(bundle.knowledge_network, 1)],
    ["object_types", pretty(bundle.object_types, 1)],
    ["relation_types", pretty(bundle.relation_types, 1)],
    ["action_types", pretty(bundle.action_types, 1)],
    [
      "objects",
      record(
        Object.entries(bundle.objects).map(([type, rows]) => [type, list(rows, 2)]),
        1,
      ),
    ],
    [
      "relations",
      record(
        Object.entries(bundle.relations).map(([relation, pairs]) => [relation, list(pairs, 2)]),
        1,
      ),
    ],
    [
      "metrics",
      record(
        Object.entries(bundle.metrics).map(([metric, series]) => [
          metric,
          record(
            Object.entries(series).map(([key, points]) => [key, JSON.stringify(points)]),
            2,
          ),
        ]),
        1,
      ),
    ],
    ["concept_groups", pretty(bundle.concept_groups, 1)],
    ["metric_definitions", pretty(bundle.metric_definitions, 1)],
    ["tool_boxes", pretty(bundle.tool_boxes, 1)],
    ["mcp_servers", pretty(bundle.mcp_servers, 1)],
  ];
  return `${record(sections, 0)}\n`;
}

const indent = (level: number): string => "  ".repeat(level);

/** JSON.stringify with two spaces, its lines shifted to `level`. */
function pretty(value: unknown, level: number): string {
  return JSON.stringify(value, null, 2).replaceAll("\n", `\n${indent(level)}`);
}

/** An array with one compact item per line. */
function list(items: unknown[], level: number): string {
  if (items.length === 0) return "[]";
  return `[\n${items.map((item) => `${indent(level + 1)}${JSON.stringify(item)}`).join(",\n")}\n${indent(level)}]`;
}

/** An object whose values are already serialised. */
function record(entries: [string, string][], level: number): string {
  if (entries.length === 0) return "{}";
  return `{\n${entries.map(([key, value]) => `${indent(level + 1)}${JSON.stringify(key)}: ${value}`).join(",\n")}\n${indent(level)}}`;
}
