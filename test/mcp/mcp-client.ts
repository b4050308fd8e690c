import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { decode } from "@toon-format/toon";
import { parse as parseYaml } from "yaml";

/** Every tool, in the order tools/list gives them. */
export const TOOL_NAMES = [
  "retrieve_schema",
  "retrieve_keyword_context",
  "kn_search",
  "knowledge_rerank",
  "search_schema",
  "get_action_info",
  "find_skills",
  "query_object_instance",
  "query_instance_subgraph",
  "get_logic_properties_values",
  "search_memories",
  "get_memory_detail",
  "extract_search_keywords",
  "expand_context_window",
  "handoff",
  "store_memory",
  "remember",
  "delete_memory",
  "recall",
] as const;

export const KN = [{ knowledge_network_id: "kn_medical" }];
export const QUESTION = "上气道梗阻有哪些症状";

/** What a tool's text says, read back from the format it was written in. */
export type Answer = Record<string, unknown>;

/** The error object of a failed tool call's text. */
export interface ToolFailure {
  code: string;
  reason: string;
  message: string;
  invalid_arguments?: { field: string; description: string }[];
  valid_values?: string[];
  next_step?: string;
  next_tool?: string;
  /** The resolver's missing parameters: the property, and its parameters with type and hint. */
  missing_parameters?: { field: string; description: string }[];
  trace_id: string;
}

/**
 * The SDK's own MCP client over Streamable HTTP to `<baseUrl>/mcp`, sending these headers on every request.
 * It lists the tools first: the SDK then checks every tool result's structuredContent against the tool's
 * outputSchema (and fails a result that has none), so every test that calls a tool checks that contract too.
 */
export async function connectHttp(
  baseUrl: string,
  headers: Record<string, string> = {},
  path = "/mcp",
): Promise<Client> {
  const client = new Client({ name: "context-loader-tests", version: "1.0.0" });
  await client.connect(new StreamableHTTPClientTransport(new URL(path, baseUrl), { requestInit: { headers } }));
  await client.listTools();
  return client;
}

/** Reads a tool's text in the format it was asked for (TOON when none was). */
export function read(text: string, format: "json" | "yaml" | "toon" = "toon"): Answer {
  if (format === "json") return JSON.parse(text) as Answer;
  if (format === "yaml") return parseYaml(text) as Answer;
  return decode(text) as Answer;
}

/** Calls a tool and returns whether it failed and its single text block. */
export async function callRaw(
  client: Client,
  name: string,
  args: Record<string, unknown>,
): Promise<{ isError: boolean; text: string }> {
  const result = await client.callTool({ name, arguments: args });
  const content = result.content as { type: string; text: string }[];
  if (content.length !== 1 || content[0]?.type !== "text") {
    throw new Error(`expected one text block, got ${JSON.stringify(result.content)}`);
  }
  return { isError: result.isError === true, text: content[0].text };
}

/** Calls a tool that must succeed; its answer read back from the format asked for (TOON by default). */
export async function callOk(client: Client, name: string, args: Record<string, unknown>): Promise<Answer> {
  const { isError, text } = await callRaw(client, name, args);
  if (isError) throw new Error(`${name} failed: ${text}`);
  return read(text, formatIn(args));
}

/** Calls a tool that must fail; its error read back from the plain text it is written in. */
export async function callFails(client: Client, name: string, args: Record<string, unknown>): Promise<ToolFailure> {
  const { isError, text } = await callRaw(client, name, args);
  if (!isError) throw new Error(`${name} was expected to fail but answered: ${text.slice(0, 500)}`);
  return parseFailure(text);
}

/**
 * A tool error's plain text as its parts: the first line `CODE (REASON): message`, then labelled lines
 * (`Valid values:`, `Next step:`, `Next tool:`, `Trace id:`) and labelled lists of `- name: text` items
 * (`Invalid arguments:`, `Missing parameters:`). Throws on any line it cannot place, so a change in the
 * layout fails the tests that read errors.
 */
export function parseFailure(text: string): ToolFailure {
  const [first = "", ...rest] = text.split("\n");
  const head = /^([A-Z_]+) \(([A-Z_]+)\): (.*)$/.exec(first);
  if (!head) throw new Error(`not a tool error: ${first}`);
  const failure: ToolFailure = { code: head[1]!, reason: head[2]!, message: head[3]!, trace_id: "" };
  let list: { field: string; description: string }[] | undefined;
  for (const line of rest) {
    const item = /^- ([^:]+): (.*)$/.exec(line);
    if (item && list) {
      list.push({ field: item[1]!, description: item[2]! });
      continue;
    }
    list = undefined;
    if (line === "Invalid arguments:") list = failure.invalid_arguments = [];
    else if (line === "Missing parameters:") list = failure.missing_parameters = [];
    else if (line.startsWith("Valid values: ")) failure.valid_values = line.slice(14).split(", ");
    else if (line.startsWith("Next step: ")) failure.next_step = line.slice(11);
    else if (line.startsWith("Next tool: ")) failure.next_tool = line.slice(11);
    else if (line.startsWith("Trace id: ")) failure.trace_id = line.slice(10);
    else throw new Error(`unexpected line in a tool error: ${line}`);
  }
  return failure;
}

function formatIn(args: Record<string, unknown>): "json" | "yaml" | "toon" {
  const f = args["output_format"] ?? args["response_format"] ?? "toon";
  return (typeof f === "string" ? f : "toon") as "json" | "yaml" | "toon";
}

/** The fields an error names as invalid. */
export const fieldsOf = (e: ToolFailure): string[] => (e.invalid_arguments ?? []).map((v) => v.field);

/** A copy without the keys that differ from call to call (session ids, trace ids). */
export function withoutIds(value: Answer, keys: readonly string[] = ["session_id", "trace_id"]): Answer {
  return Object.fromEntries(Object.entries(value).filter(([k]) => !keys.includes(k)));
}
