import type { DescMessage, MessageInitShape } from "@bufbuild/protobuf";
import type { z } from "zod";
import type { CallContext } from "./call-context";
import type { Json } from "./json";

/** Hears what a long-running tool is doing, one line at a time (MCP progress notifications). */
export type Progress = (message: string) => void;

/**
 * A tool an agent can call (over MCP, and described by ListTools): its name,
 * a description written for an LLM choosing a tool (when to use it, what comes
 * back, what to call next), the zod schema its arguments are validated with —
 * the one the JSON Schema agents see is generated from — and what it does.
 */
export interface Tool<D> {
  name: string;
  title: string;
  description: string;
  input: z.ZodType;
  /**
   * The RPC answer the tool's result also is: MCP publishes its JSON Schema as
   * the tool's outputSchema and sends the answer as structuredContent.
   */
  output: DescMessage;
  /** True when the tool changes stored data (stores or deletes a memory); retrieval tools only read. */
  writes?: boolean;
  /** True when what it changes cannot be undone (deleting a memory). */
  destructive?: boolean;
  /** Checked before the arguments, as the RPCs check it first (MemRecall: the caller must have an account). */
  before?(ctx: CallContext): void;
  /**
   * Runs the tool on validated arguments. `progress` is given when the caller
   * asked to hear how the call goes.
   */
  run(deps: D, ctx: CallContext, input: never, progress?: Progress): Promise<ToolResult>;
}

/**
 * What a tool answers: `answer`, its compact shape (tables of flat rows, see
 * docs/mcp.md) that the caller reads in the format it asked for, and
 * `structured`, the same result as the RPC answers it (`output`).
 */
export interface ToolResult<O extends DescMessage = DescMessage> {
  answer: Json;
  structured: MessageInitShape<O>;
}

/** Declares a tool whose `run` receives what its schema outputs and answers its output message. */
export function defineTool<D, S extends z.ZodType, O extends DescMessage>(
  tool: Omit<Tool<D>, "input" | "output" | "run"> & {
    input: S;
    output: O;
    run(deps: D, ctx: CallContext, input: z.output<S>, progress?: Progress): Promise<ToolResult<O>>;
  },
): Tool<D> {
  return tool as unknown as Tool<D>;
}
