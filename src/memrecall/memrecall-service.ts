import type { ConnectRouter } from "@connectrpc/connect";
import {
  ExpandContextWindowRequestSchema,
  HandoffRequestSchema,
  MemRecallService,
} from "../../gen/contextloader/memrecall/v1/memrecall_pb";
import { notBuiltYet } from "../errors/tool-error";
import { validateRequest } from "../errors/validation";
import { callContext } from "../server/interceptors";
import { expandContextWindow, expandContextWindowInput } from "./expand-context-window";
import { handoff, handoffInput } from "./handoff";

export interface MemRecallDeps {
  /** Largest context window ExpandContextWindow grants. */
  maxContextWindow: number;
}

const SERVICE = "contextloader.memrecall.v1.MemRecallService";
const STORE_ISSUE = 6;

/** Registers MemRecallService: decode and validate, call the tool, encode. */
export function registerMemRecall(router: ConnectRouter, deps: MemRecallDeps): void {
  const expandInput = expandContextWindowInput(deps.maxContextWindow);
  router.service(MemRecallService, {
    expandContextWindow(req) {
      const r = expandContextWindow(validateRequest(ExpandContextWindowRequestSchema, req, expandInput));
      return { approved: r.approved, newSize: r.new_size, iteration: r.iteration, maxIterations: r.max_iterations, message: r.message };
    },
    handoff(req, ctx) {
      const input = validateRequest(HandoffRequestSchema, req, handoffInput);
      callContext(ctx).log.info(
        {
          confidence: input.confidence,
          relevant_memory_keys: input.relevant_memory_keys.length,
          needs_more_info: input.needs_more_info,
          iteration_used: input.iteration_used,
          context_window_used: input.context_window_used,
        },
        "memory recall handed off",
      );
      const r = handoff(input);
      return { success: r.success, message: r.message, taskCompleted: r.task_completed };
    },
    searchMemories() {
      throw notBuiltYet(`${SERVICE}/SearchMemories`, STORE_ISSUE, "the memory store and its search");
    },
    getMemoryDetail() {
      throw notBuiltYet(`${SERVICE}/GetMemoryDetail`, STORE_ISSUE, "the memory store");
    },
    extractSearchKeywords() {
      throw notBuiltYet(`${SERVICE}/ExtractSearchKeywords`, STORE_ISSUE, "keyword extraction (LLM and jieba fallback)");
    },
    listTools() {
      throw notBuiltYet(`${SERVICE}/ListTools`, STORE_ISSUE, "the tool registry");
    },
    storeMemory() {
      throw notBuiltYet(`${SERVICE}/StoreMemory`, STORE_ISSUE, "the memory store");
    },
    deleteMemory() {
      throw notBuiltYet(`${SERVICE}/DeleteMemory`, STORE_ISSUE, "the memory store");
    },
  });
}
