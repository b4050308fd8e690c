import { readFileSync } from "node:fs";
import { Server } from "@modelcontextprotocol/sdk/server/index.js";
import {
  type CallToolRequest,
  CallToolRequestSchema,
  type CallToolResult,
  ErrorCode,
  ListToolsRequestSchema,
  McpError,
} from "@modelcontextprotocol/sdk/types.js";
import type { jsonSchemaValidator } from "@modelcontextprotocol/sdk/validation/types.js";
import { z } from "zod";
import type { CallContext } from "../core/call-context";
import { packagePath } from "../core/package-root";
import { inSpan } from "../core/telemetry";
import { publicError } from "../errors/public-error";
import type { Language } from "../errors/text";
import { renderIn, type ToolError } from "../errors/tool-error";
import type { Release } from "../server/admission";
import type { McpTool } from "./tools";

/** The server's name and version (package.json's) in the MCP handshake. */
export const SERVER_INFO = {
  name: "context-loader",
  title: "Context Loader",
  version: (JSON.parse(readFileSync(packagePath("package.json"), "utf8")) as { version: string }).version,
};

const INSTRUCTIONS = `业务知识网络与用户记忆的检索工具。
知识：先 retrieve_schema（问题 → 相关的对象类型、属性、关系），再 retrieve_keyword_context（实体名 → 实例与一跳邻居，同一 session_id）；或一次 kn_search（概念 + 实例）。指标值用 get_logic_properties_values。
记忆：search_memories → get_memory_detail；或一次 recall（给出对话，找出用户所指的记忆，可带 progressToken 看每一步）；保存用 store_memory，或把整段对话交给 remember。
回答默认 TOON（output_format 可选 json、yaml）。出错时结果 isError=true，文本说明哪个参数错了以及下一步。`;

/**
 * An MCP server over the tools: tools/list from their generated schemas,
 * tools/call validating and running them. `contextOf` gives each call its
 * context (caller, trace id, logger, abort signal): from the HTTP request's
 * headers over Streamable HTTP, from the environment over stdio.
 *
 * A tool that fails answers a result with isError: true whose text says what
 * was wrong, which argument, and the next step (the RPC's ErrorInfo and
 * BadRequest, in the format asked for); only protocol mistakes — an unknown
 * tool, a malformed request — are JSON-RPC errors.
 */
export function createMcpServer(opts: {
  tools: readonly McpTool[];
  contextOf(signal: AbortSignal): CallContext;
  /**
   * Waits for a slot of admission control for one tools/list or tools/call;
   * resolves with its release, rejects (OVERLOADED, the signal's reason) when
   * refused. Absent over stdio, where one client is all there is.
   */
  admit?(signal: AbortSignal): Promise<Release> | Release;
}): Server {
  const byName = new Map(opts.tools.map((t) => [t.name, t]));
  const server = new Server(SERVER_INFO, {
    capabilities: { tools: { listChanged: false } },
    instructions: INSTRUCTIONS,
    jsonSchemaValidator: noElicitation,
  });
  const tools = opts.tools.map(({ name, title, description, inputSchema, outputSchema, annotations }) => ({
    name,
    title,
    description,
    inputSchema,
    outputSchema,
    annotations,
  }));
  server.setRequestHandler(ListToolsRequestSchema, async (_request, extra) => {
    try {
      (await admitted(opts.admit, extra.signal))?.();
    } catch (err) {
      const { error } = publicError(err, "");
      const language = opts.contextOf(extra.signal).language;
      throw new McpError(
        ErrorCode.InternalError,
        `${error.code.toUpperCase()} (${error.reason}): ${error.text[language]}`,
      );
    }
    return { tools };
  });
  server.setRequestHandler(LooseCallToolRequest, async (request, extra): Promise<CallToolResult> => {
    // The SDK has checked the request against CallToolRequestSchema before calling this (see LooseCallToolRequest).
    const { name, arguments: args = {} } = (request as CallToolRequest).params;
    const tool = byName.get(name);
    const ctx = opts.contextOf(extra.signal);
    if (!tool) {
      const known = [...byName.keys()].join(", ");
      throw new McpError(
        ErrorCode.InvalidParams,
        ctx.language === "zh"
          ? `未知的工具 ${JSON.stringify(name)}；工具有：${known}`
          : `unknown tool ${JSON.stringify(name)}; the tools are ${known}`,
      );
    }
    const started = performance.now();
    let release: Release | undefined;
    // A client that sends a progressToken hears each step of a long tool (recall) as notifications/progress,
    // one after another and all before the result: a client drops progress that comes after its answer.
    const token = (request as CallToolRequest).params._meta?.progressToken;
    let step = 0;
    let notified = Promise.resolve();
    const progress =
      token === undefined
        ? undefined
        : (message: string) => {
            const params = { progressToken: token, progress: ++step, message };
            notified = notified
              .then(() => extra.sendNotification({ method: "notifications/progress", params }))
              .catch((err: unknown) => ctx.log.warn({ err, tool: name }, "mcp progress notification not sent"));
          };
    try {
      release = await admitted(opts.admit, ctx.signal);
      const { text, structured } = await inSpan(`mcp tool ${name}`, { "mcp.tool": name }, () =>
        tool.call(ctx, args, progress).finally(() => notified),
      );
      ctx.log.info({ tool: name, ms: elapsed(started), chars: text.length }, "mcp tool");
      return { content: [{ type: "text", text }], structuredContent: structured };
    } catch (err) {
      const { error: failure, unexpected } = publicError(err, ctx.traceId, ctx.signal);
      if (unexpected) ctx.log.error({ err, tool: name }, "mcp tool failed with an unexpected error");
      else
        ctx.log.info(
          { tool: name, ms: elapsed(started), reason: failure.reason, detail: failure.privateDetail },
          "mcp tool failed",
        );
      return { isError: true, content: [{ type: "text", text: errorText(failure, ctx.traceId, ctx.language) }] };
    } finally {
      release?.();
    }
  });
  return server;
}

/** A slot from `admit`, when there is admission control. */
async function admitted(
  admit: ((signal: AbortSignal) => Promise<Release> | Release) | undefined,
  signal: AbortSignal,
): Promise<Release | undefined> {
  return admit === undefined ? undefined : await admit(signal);
}

/**
 * tools/call registered with its params unchecked: the SDK's tools/call
 * wrapper then checks them against CallToolRequestSchema itself and answers a
 * bad request (arguments not an object, no name) with -32602 Invalid params.
 * Registered with the strict schema, the SDK's first parse throws a bare
 * ZodError instead, which goes out as -32603 Internal error.
 */
const LooseCallToolRequest = CallToolRequestSchema.extend({ params: z.unknown() });

/**
 * The SDK validates a client's answers to elicitation with this; the server
 * never elicits, so it refuses rather than build an Ajv instance per request
 * (a third of a stateless call's time).
 */
const noElicitation: jsonSchemaValidator = {
  getValidator: () => () => ({ valid: false, data: undefined, errorMessage: "this server does not elicit input" }),
};

/** RPC methods a hint may name, as the tools an MCP client calls. */
const TOOL_OF_RPC: Record<string, string> = {
  RetrieveSchema: "retrieve_schema",
  RetrieveKeywordContext: "retrieve_keyword_context",
  KnSearch: "kn_search",
  RerankConcepts: "knowledge_rerank",
  ResolveLogicProperties: "get_logic_properties_values",
  SearchSchema: "search_schema",
  GetActionInfo: "get_action_info",
  FindSkills: "find_skills",
  QueryObjectInstances: "query_object_instance",
  QueryInstanceSubgraph: "query_instance_subgraph",
  SearchMemories: "search_memories",
  GetMemoryDetail: "get_memory_detail",
  ExtractSearchKeywords: "extract_search_keywords",
  ExpandContextWindow: "expand_context_window",
  Handoff: "handoff",
  StoreMemory: "store_memory",
  DeleteMemory: "delete_memory",
  RememberConversation: "remember",
};

/**
 * A failure as the agent reads it, in plain text whatever format the call
 * asked for (a format is for answers; an error has to be read even when the
 * format was what failed): the gRPC code and stable reason with the message,
 * each invalid argument, the values to pick from, missing parameters, the next
 * step and the tool to call for it, and the trace id — the RPC's error details,
 * one labelled line or list each.
 */
function errorText(err: ToolError, traceId: string, language: Language): string {
  const said = renderIn(err, language);
  const label = LABELS[language];
  const lines = [`${err.code.toUpperCase()} (${err.reason}): ${oneLine(toolNamesIn(said.message))}`];
  if (said.violations.length > 0) {
    lines.push(label.invalid, ...said.violations.map((v) => `- ${v.field}: ${oneLine(v.description)}`));
  }
  const valid = said.hint?.validValues ?? [];
  if (valid.length > 0) lines.push(`${label.valid} ${valid.map(oneLine).join(", ")}`);
  if (err.missing.length > 0) {
    lines.push(
      label.missing,
      ...err.missing.map(
        (m) =>
          `- ${m.property}: ${m.params
            .map(
              (p) =>
                `${p.name} (${[p.type, p.hint]
                  .filter((x) => x !== "")
                  .map(oneLine)
                  .join(", ")})`,
            )
            .join("; ")}`,
      ),
    );
  }
  const next = toolNamesIn(said.hint?.message ?? said.detail["suggestion"]);
  if (next) lines.push(`${label.next} ${oneLine(next)}`);
  const nextRpc = err.hint?.nextRpc?.split("/").pop();
  if (nextRpc !== undefined) lines.push(`${label.nextTool} ${TOOL_OF_RPC[nextRpc] ?? nextRpc}`);
  lines.push(`${label.trace} ${traceId}`);
  return lines.join("\n");
}

/** errorText's labels: the text is read by the agent, in the caller's language throughout. */
const LABELS: Record<Language, Record<"invalid" | "valid" | "missing" | "next" | "nextTool" | "trace", string>> = {
  en: {
    invalid: "Invalid arguments:",
    valid: "Valid values:",
    missing: "Missing parameters:",
    next: "Next step:",
    nextTool: "Next tool:",
    trace: "Trace id:",
  },
  zh: {
    invalid: "无效参数：",
    valid: "可选值：",
    missing: "缺少的参数：",
    next: "下一步：",
    nextTool: "下一个工具：",
    trace: "Trace id：",
  },
};

/** Each part of the error on its own line: a value's own line breaks would read as new parts. */
function oneLine(text: string): string {
  return text.replace(/\s*\n\s*/g, " ");
}

const RPC_NAME = new RegExp(`\\b(${Object.keys(TOOL_OF_RPC).join("|")})\\b`, "g");

/** A text written for RPC callers ("Pass the session_id that RetrieveSchema returned") in the tools' names. */
function toolNamesIn<T>(text: T): T {
  return (typeof text === "string" ? text.replace(RPC_NAME, (rpc) => TOOL_OF_RPC[rpc] ?? rpc) : text) as T;
}

function elapsed(started: number): number {
  return Math.round((performance.now() - started) * 10) / 10;
}
