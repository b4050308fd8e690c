import type { DescMessage, MessageShape } from "@bufbuild/protobuf";
import type { ConnectRouter, HandlerContext } from "@connectrpc/connect";
import type { z } from "zod";
import {
  DeleteMemoryRequestSchema,
  ExpandContextWindowRequestSchema,
  ExtractSearchKeywordsRequestSchema,
  GetMemoryDetailRequestSchema,
  HandoffRequestSchema,
  MemRecallService,
  RecallRequestSchema,
  RememberConversationRequestSchema,
  SearchMemoriesRequestSchema,
  StoreMemoryRequestSchema,
} from "../../gen/contextloader/memrecall/v1/memrecall_pb";
import type { CallContext } from "../core/call-context";
import { render } from "../core/output-format";
import { validateFormattedRequest, validateRequest } from "../errors/validation";
import { callContext } from "../server/interceptors";
import { searchAnswer } from "./answers";
import {
  expandContextWindowResponse,
  extractKeywordsResponse,
  handoffResponse,
  listToolsResponse,
  memoryDetailResponse,
  recallResponse,
  rememberResponse,
  searchMemoriesResponse,
  storeMemoryResponse,
} from "./encode";
import { expandContextWindow } from "./expand-context-window";
import { handoff } from "./handoff";
import {
  deleteMemoryInput,
  expandContextWindowInput,
  extractKeywordsInput,
  getMemoryDetailInput,
  handoffInput,
  searchMemoriesInput,
  storeMemoryInput,
} from "./inputs";
import { extractKeywords } from "./keyword-extraction";
import type { MemRecallDeps } from "./memories-deps";
import { ownerOf } from "./owner";
import { getMemoryDetail } from "./read";
import { recallInput } from "./recall/input";
import { runRecall } from "./recall/recall";
import { rememberInput } from "./remember/input";
import { rememberConversation } from "./remember/remember";
import { searchMemories } from "./search";
import { toolDefinitions } from "./tool-definitions";
import { memrecallTools } from "./tools";
import { deleteMemory, storeMemory } from "./write";

/**
 * Registers MemRecallService: every call needs the caller's account (checked
 * first, before the request), then decode and validate, call the tool, encode.
 */
export function registerMemRecall(router: ConnectRouter, deps: MemRecallDeps): void {
  const expandInput = expandContextWindowInput(deps.maxContextWindow);
  const recallIn = recallInput(deps.maxContextWindow);
  const tools = toolDefinitions(memrecallTools(deps.maxContextWindow));
  // In the proto's order. Each handler: decode and validate, the tool, encode.
  router.service(MemRecallService, {
    async searchMemories(req, ctx) {
      const c = withAccount(ctx);
      const { input, format } = validateFormattedRequest(SearchMemoriesRequestSchema, req, searchMemoriesInput);
      const out = await searchMemories(deps, c, input);
      // With output_format: the compact answer (the MCP tool's) as text.
      return format === undefined
        ? searchMemoriesResponse(out)
        : { success: true, text: render(searchAnswer(out), format) };
    },
    async getMemoryDetail(req, ctx) {
      const { c, input } = decode(ctx, GetMemoryDetailRequestSchema, req, getMemoryDetailInput);
      return memoryDetailResponse(await getMemoryDetail(deps, c, input.memory_key));
    },
    async extractSearchKeywords(req, ctx) {
      const { c, input } = decode(ctx, ExtractSearchKeywordsRequestSchema, req, extractKeywordsInput);
      return extractKeywordsResponse(
        await extractKeywords(deps.llm, c, input.query, input.context, input.max_keywords),
      );
    },
    expandContextWindow(req, ctx) {
      const { c, input } = decode(ctx, ExpandContextWindowRequestSchema, req, expandInput);
      return expandContextWindowResponse(expandContextWindow(input, c.language));
    },
    handoff(req, ctx) {
      const { c, input } = decode(ctx, HandoffRequestSchema, req, handoffInput);
      return handoffResponse(handoff(c, input));
    },
    listTools(_req, ctx) {
      withAccount(ctx);
      return listToolsResponse(tools);
    },
    async storeMemory(req, ctx) {
      const { c, input } = decode(ctx, StoreMemoryRequestSchema, req, storeMemoryInput);
      return storeMemoryResponse(await storeMemory(deps, c, input));
    },
    async deleteMemory(req, ctx) {
      const { c, input } = decode(ctx, DeleteMemoryRequestSchema, req, deleteMemoryInput);
      return { deleted: await deleteMemory(deps, c, input.memory_key) };
    },
    // Server streaming: each event as it happens; a failure ends the stream in its place.
    async *recall(req, ctx) {
      const { c, input } = decode(ctx, RecallRequestSchema, req, recallIn);
      for await (const event of runRecall(deps, c, input, tools)) yield recallResponse(event);
    },
    async rememberConversation(req, ctx) {
      const { c, input } = decode(ctx, RememberConversationRequestSchema, req, rememberInput);
      return rememberResponse(await rememberConversation(deps, c, input));
    },
  });
}

/**
 * A request's call context and validated input, in the order every MemRecall
 * call is checked: the caller's account first (no account, no memories),
 * then the request against its zod input.
 */
function decode<D extends DescMessage, S extends z.ZodType>(
  ctx: HandlerContext,
  desc: D,
  req: MessageShape<D>,
  schema: S,
): { c: CallContext; input: z.output<S> } {
  const c = withAccount(ctx);
  return { c, input: validateRequest(desc, req, schema) };
}

/** The call's context, once the caller is known to have an account with memories (else the call fails here). */
function withAccount(ctx: HandlerContext): CallContext {
  const c = callContext(ctx);
  ownerOf(c.caller);
  return c;
}
