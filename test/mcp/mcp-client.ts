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
  trace_id: string;
}

/** The SDK's own MCP client over Streamable HTTP to `<baseUrl>/mcp`, sending these headers on every request. */
export async function connectHttp(baseUrl: string, headers: Record<string, string> = {}): Promise<Client> {
  const client = new Client({ name: "context-loader-tests", version: "1.0.0" });
  await client.connect(new StreamableHTTPClientTransport(new URL("/mcp", baseUrl), { requestInit: { headers } }));
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

/** Calls a tool that must fail; its error object read back from the format asked for. */
export async function callFails(client: Client, name: string, args: Record<string, unknown>): Promise<ToolFailure> {
  const { isError, text } = await callRaw(client, name, args);
  if (!isError) throw new Error(`${name} was expected to fail but answered: ${text.slice(0, 500)}`);
  const format = formatIn(args);
  // A bad format is reported in the default one.
  const answer = read(text, ["json", "yaml", "toon"].includes(format) ? format : "toon");
  return answer["error"] as ToolFailure;
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
