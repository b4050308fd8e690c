import { StdioServerTransport } from "@modelcontextprotocol/sdk/server/stdio.js";
import { pino } from "pino";
import { type Config, loadConfig } from "./config";
import { ConfigError } from "./config-fields";
import type { Caller } from "./core/call-context";
import { newTraceId } from "./core/ids";
import { buildDeps } from "./deps";
import { ToolError } from "./errors/tool-error";
import { BundleError } from "./kn/embedded/bundle";
import { VocabularyError } from "./knowledge/matching/vocabulary";
import { createMcpServer } from "./mcp/server";
import { mcpTools } from "./mcp/tools";
import { GlossaryError } from "./memrecall/glossary";
import { callerFromHeaders, knIdFromHeaders } from "./server/caller";
import { MemoryFileError } from "./store/memories/sqlite-memory-store";

/**
 * `npm run --silent mcp:stdio`: the same tools over MCP's stdio transport, for clients
 * that spawn their server as a process. The settings are the service's
 * (knowledge source, LLM, memory store…); the caller is MCP_ACCOUNT_ID /
 * MCP_ACCOUNT_TYPE / MCP_ACCOUNT_SCOPES, checked like the x-account-* headers. stdout carries
 * only MCP messages: the logs go to stderr. Ends when the client closes stdin.
 */
async function main(): Promise<void> {
  if (process.env["npm_lifecycle_event"] === "mcp:stdio" && process.env["npm_config_loglevel"] !== "silent") {
    // Without --silent npm has already written its "> context-loader@… mcp:stdio" banner to stdout,
    // which an MCP client reads as a broken message; say how to start it instead of half-working.
    process.stderr.write(
      "context-loader mcp:stdio cannot start: run it as `npm run --silent mcp:stdio` (or `npx tsx src/mcp-stdio.ts`); without --silent npm writes its banner to stdout, where MCP clients expect only JSON-RPC\n",
    );
    process.exit(2);
  }
  let config: Config;
  let caller: Caller;
  let headerKnId: string | undefined;
  try {
    config = loadConfig(process.env);
    const headers = new Headers({
      "x-account-id": process.env["MCP_ACCOUNT_ID"] ?? "",
      "x-account-type": process.env["MCP_ACCOUNT_TYPE"] ?? "",
      "x-account-scopes": process.env["MCP_ACCOUNT_SCOPES"] ?? "",
      "x-kn-id": process.env["MCP_KN_ID"] ?? "",
    });
    caller = callerFromHeaders(headers);
    headerKnId = knIdFromHeaders(headers);
  } catch (err) {
    if (err instanceof ConfigError || err instanceof ToolError) {
      // The headers' names in the message become the variables' (x-account-type → MCP_ACCOUNT_TYPE).
      const message =
        err instanceof ToolError
          ? err.message
              .replaceAll("x-account-id", "MCP_ACCOUNT_ID")
              .replaceAll("x-account-type", "MCP_ACCOUNT_TYPE")
              .replaceAll("x-account-scopes", "MCP_ACCOUNT_SCOPES")
              .replaceAll("x-kn-id", "MCP_KN_ID")
          : err.message;
      process.stderr.write(`context-loader mcp:stdio cannot start: ${message}\n`);
      process.exit(2);
    }
    throw err;
  }
  const log = pino(
    { level: config.logLevel, base: { service: "context-loader", transport: "mcp-stdio" } },
    pino.destination(2),
  );
  let deps: ReturnType<typeof buildDeps>;
  try {
    deps = buildDeps(config, log);
  } catch (err) {
    if (startUpProblem(err)) {
      process.stderr.write(`context-loader mcp:stdio cannot start: ${err.message}\n`);
      process.exit(2);
    }
    throw err;
  }
  try {
    await deps.start();
  } catch (err) {
    if (startUpProblem(err)) {
      process.stderr.write(`context-loader mcp:stdio cannot start: ${err.message}\n`);
      process.exit(2);
    }
    throw err;
  }
  const stopping = new AbortController();
  const server = createMcpServer({
    tools: mcpTools(deps),
    contextOf: (signal) => {
      const traceId = newTraceId();
      return {
        caller,
        ...(headerKnId !== undefined ? { headerKnId } : {}),
        traceId,
        // A process has no Accept-Language: its client gets the configured language (DEFAULT_LANGUAGE).
        language: config.server.defaultLanguage,
        log: log.child({ trace_id: traceId, account: caller.accountId }),
        signal: AbortSignal.any([signal, stopping.signal]),
        remainingMs: () => undefined,
      };
    },
  });
  let closing = false;
  const stop = async (why: string) => {
    if (closing) return;
    closing = true;
    log.info({ why }, "mcp:stdio stopping");
    stopping.abort(new Error("the server is stopping"));
    await server.close();
    await deps.close();
    process.exit(0);
  };
  server.onclose = () => void stop("the transport closed");
  // The SDK's stdio transport does not watch for the end of stdin: a client that exits closes it.
  process.stdin.once("end", () => void stop("the client closed stdin"));
  process.on("SIGTERM", () => void stop("SIGTERM"));
  process.on("SIGINT", () => void stop("SIGINT"));
  await server.connect(new StdioServerTransport());
  log.info({ account: caller.accountId, account_type: caller.accountType }, "mcp:stdio ready");
}

/** A file or setting to fix, said in one line as main.ts says it: not a crash. */
function startUpProblem(err: unknown): err is Error {
  return (
    err instanceof BundleError ||
    err instanceof VocabularyError ||
    err instanceof GlossaryError ||
    err instanceof MemoryFileError
  );
}

main().catch((err: unknown) => {
  process.stderr.write(`context-loader mcp:stdio failed: ${(err as Error).stack ?? String(err)}\n`);
  process.exit(1);
});
