import { create, toJson } from "@bufbuild/protobuf";
import { z } from "zod";
import type { CallContext } from "../core/call-context";
import type { Json } from "../core/json";
import { OUTPUT_FORMATS, type OutputFormat, render } from "../core/output-format";
import { protoJsonSchema } from "../core/proto-json-schema";
import type { Progress, Tool } from "../core/tool";
import { text } from "../errors/text";
import { type FieldViolation, invalidArgument, ToolError } from "../errors/tool-error";
import { safeParseBoth, violationsOf } from "../errors/validation";
import type { KnowledgeDeps } from "../knowledge/deps";
import { knowledgeTools } from "../knowledge/tools";
import type { MemRecallDeps } from "../memrecall/memories-deps";
import { memrecallTools } from "../memrecall/tools";
import type { ResolverDeps } from "../resolver/resolve";
import { resolverTools } from "../resolver/tools";

/** A tool bound to the service's dependencies, as MCP lists and calls it. */
export interface McpTool {
  name: string;
  title: string;
  description: string;
  /** JSON Schema of the arguments, generated from the zod schema `call` validates with (output_format added). */
  inputSchema: { type: "object"; [key: string]: unknown };
  /** JSON Schema of `structured`: the RPC answer's (proto3 JSON, proto field names), its `text` left out. */
  outputSchema: { type: "object"; [key: string]: unknown };
  annotations: { title: string; readOnlyHint: boolean; destructiveHint: boolean; openWorldHint: boolean };
  /**
   * Validates the arguments and runs the tool: the compact answer as text in the format asked and the
   * RPC's answer as JSON (MCP's structuredContent), or a ToolError.
   * `progress` hears what a long tool (recall) is doing, when the client asked for progress.
   */
  call(ctx: CallContext, args: Record<string, unknown>, progress?: Progress): Promise<McpAnswer>;
}

export interface McpAnswer {
  text: string;
  structured: Record<string, Json>;
}

/** Over MCP the answer is TOON unless the caller asks otherwise: the fewest tokens, every fact kept. */
const outputFormatArgument = z
  .enum(OUTPUT_FORMATS, { error: 'output_format must be "json", "yaml" or "toon"' })
  .default("toon")
  .describe("回答的写法：toon（默认，token 最少）、yaml 或 json；三种写法内容相同。");
/** The platform's own tools call the same argument response_format (json | toon): accepted as another name. */
const responseFormatArgument = z
  .enum(OUTPUT_FORMATS, { error: 'response_format must be "json", "yaml" or "toon"' })
  .optional()
  .describe("output_format 的另一个名字（平台工具的写法），二者给一个即可。");

const formatSchemas = {
  output_format: jsonSchemaOf(outputFormatArgument),
  response_format: jsonSchemaOf(responseFormatArgument),
};

/** Every tool of the three capabilities, bound to their dependencies, in the order ListTools shows them. */
export function mcpTools(deps: {
  knowledge: KnowledgeDeps;
  resolver: ResolverDeps;
  memrecall: MemRecallDeps;
}): McpTool[] {
  return [
    ...knowledgeTools.map((t) => bind(t, deps.knowledge)),
    ...resolverTools.map((t) => bind(t, deps.resolver)),
    ...memrecallTools(deps.memrecall.maxContextWindow).map((t) => bind(t, deps.memrecall)),
  ];
}

function bind<D>(tool: Tool<D>, deps: D): McpTool {
  const schema = jsonSchemaOf(tool.input);
  // An RPC answer's `text` holds the compact answer when output_format is set: over MCP that is the text content.
  const outputSchema = protoJsonSchema(tool.output, { omit: ["text"] });
  const properties = { ...((schema["properties"] as Record<string, Json> | undefined) ?? {}), ...formatSchemas };
  return {
    name: tool.name,
    title: tool.title,
    description: tool.description,
    // Unknown arguments are refused (below), whatever the zod schema would strip: the schema says so.
    inputSchema: { ...schema, type: "object", properties, additionalProperties: false },
    outputSchema: { ...outputSchema, type: "object" },
    annotations: {
      title: tool.title,
      readOnlyHint: !tool.writes,
      destructiveHint: tool.destructive === true,
      // Every tool works on this service's own networks and memories, not the open web.
      openWorldHint: false,
    },
    async call(ctx, args, progress) {
      tool.before?.(ctx);
      const { output_format, response_format, ...rest } = args;
      // A bad format, unknown arguments and invalid ones are reported together: one round trip fixes them all.
      let format: OutputFormat = "toon";
      const badFormat: FieldViolation[] = [];
      try {
        format = formatOf(output_format, response_format);
      } catch (err) {
        if (!(err instanceof ToolError)) throw err;
        badFormat.push(...err.violations);
      }
      // Own keys only: "constructor" or "toString" is no argument of any tool.
      const unknown = Object.keys(rest)
        .filter((k) => !Object.hasOwn(properties, k))
        .map((k) => ({
          field: k,
          description: text(`${tool.name} has no such argument`, `${tool.name} 没有这个参数`),
        }));
      const parsed = safeParseBoth(tool.input, rest);
      if (badFormat.length > 0 || unknown.length > 0 || !parsed.success) {
        throw invalidArgument(
          [...badFormat, ...unknown, ...(parsed.success ? [] : violationsOf(parsed.error))],
          unknown.length > 0
            ? {
                message: text(
                  `The arguments of ${tool.name} are: ${Object.keys(properties).join(", ")}.`,
                  `${tool.name} 的参数有：${Object.keys(properties).join(", ")}。`,
                ),
              }
            : undefined,
        );
      }
      const result = await tool.run(deps, ctx, parsed.data as never, progress);
      const { text: _text, ...structured } = toJson(tool.output, create(tool.output, result.structured), {
        useProtoFieldName: true,
        alwaysEmitImplicit: true,
      }) as Record<string, Json>;
      return { text: render(result.answer, format), structured };
    },
  };
}

/** The format asked for under either name; both given and different is an error, not a guess. */
export function formatOf(outputFormat: unknown, responseFormat: unknown): OutputFormat {
  const out = safeParseBoth(outputFormatArgument, outputFormat === "" ? undefined : outputFormat);
  const alt = safeParseBoth(responseFormatArgument, responseFormat === "" ? undefined : responseFormat);
  if (!out.success || !alt.success) {
    throw invalidArgument([
      ...(out.success ? [] : violationsOf(out.error).map((v) => ({ ...v, field: "output_format" }))),
      ...(alt.success ? [] : violationsOf(alt.error).map((v) => ({ ...v, field: "response_format" }))),
    ]);
  }
  // "" is proto's unset string, as above: only a format actually given can disagree.
  const given = outputFormat !== undefined && outputFormat !== "";
  if (alt.data !== undefined && given && alt.data !== out.data) {
    throw invalidArgument([
      {
        field: "response_format",
        description: text(
          `says ${alt.data} while output_format says ${out.data}: give one`,
          `为 ${alt.data}，而 output_format 为 ${out.data}：只给一个`,
        ),
      },
    ]);
  }
  return alt.data ?? out.data;
}

/** The JSON Schema an agent is shown for a zod schema (what the schema accepts as input). */
function jsonSchemaOf(schema: z.ZodType): Record<string, Json> {
  const { $schema: _draft, ...rest } = z.toJSONSchema(schema, { io: "input", unrepresentable: "any" }) as Record<
    string,
    Json
  >;
  return rest;
}
