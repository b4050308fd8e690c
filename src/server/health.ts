import { create } from "@bufbuild/protobuf";
import type { ConnectRouter, HandlerContext } from "@connectrpc/connect";
import {
  Health,
  type HealthCheckResponse,
  HealthCheckResponseSchema,
  HealthCheckResponse_ServingStatus as Status,
} from "../../gen/grpc/health/v1/health_pb";
import { text } from "../errors/text";
import { ToolError } from "../errors/tool-error";
import type { ToolingStreams } from "./tooling-streams";

/**
 * The serving status of the whole server ("") and of each registered service,
 * as grpc.health.v1 reports it. Every service is SERVING while the server runs
 * and NOT_SERVING from the moment shutdown begins.
 */
export class HealthState {
  private readonly statuses = new Map<string, Status>();
  private readonly listeners = new Set<() => void>();

  constructor(serviceNames: readonly string[]) {
    this.statuses.set("", Status.SERVING);
    for (const name of serviceNames) this.statuses.set(name, Status.SERVING);
  }

  /** The status of a service, or undefined for a service this server does not know. */
  get(service: string): Status | undefined {
    return this.statuses.get(service);
  }

  all(): ReadonlyMap<string, Status> {
    return this.statuses;
  }

  /** Marks every service NOT_SERVING and tells every watcher. */
  markNotServing(): void {
    for (const name of this.statuses.keys()) this.statuses.set(name, Status.NOT_SERVING);
    for (const listener of this.listeners) listener();
  }

  get serving(): boolean {
    return this.statuses.get("") === Status.SERVING;
  }

  /** Calls `listener` after each change; returns the unsubscribe function. */
  subscribe(listener: () => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }
}

/**
 * Registers grpc.health.v1.Health (Check, Watch, List) over `state`. Each
 * Watch counts against `streams` (refused RESOURCE_EXHAUSTED past its budget)
 * and ends with OK once it has seen no change for `streams.watchIdleMs`: a
 * client that still cares watches again, one that forgot its stream no
 * longer holds memory (about 49 KiB a stream, docs/operations.md).
 */
export function registerHealth(router: ConnectRouter, state: HealthState, streams: ToolingStreams): void {
  router.service(Health, {
    check(req) {
      const status = state.get(req.service);
      if (status === undefined) {
        throw new ToolError({
          code: "not_found",
          reason: "UNKNOWN_SERVICE",
          message: text(`unknown service "${req.service}"`, `未知的服务 "${req.service}"`),
          hint: {
            message: text(
              'Ask for "" (the whole server) or a service name from List.',
              '查询 ""（整个服务器）或 List 列出的服务名。',
            ),
            validValues: [...state.all().keys()],
          },
        });
      }
      return { status };
    },
    list() {
      const statuses: Record<string, HealthCheckResponse> = {};
      for (const [name, status] of state.all()) statuses[name] = create(HealthCheckResponseSchema, { status });
      return { statuses };
    },
    async *watch(req, ctx: HandlerContext) {
      const release = streams.take("Health/Watch");
      // Per the health protocol, an unknown service is reported as SERVICE_UNKNOWN, not as an error.
      const current = () => state.get(req.service) ?? Status.SERVICE_UNKNOWN;
      let wake: (() => void) | undefined;
      let changed = false;
      let idle = false;
      const unsubscribe = state.subscribe(() => {
        changed = true;
        wake?.();
      });
      const onAbort = () => wake?.();
      ctx.signal.addEventListener("abort", onAbort);
      let timer: NodeJS.Timeout | undefined;
      const idleAfter = () => {
        clearTimeout(timer);
        timer = setTimeout(() => {
          idle = true;
          wake?.();
        }, streams.watchIdleMs);
        timer.unref();
      };
      try {
        let last = current();
        yield { status: last };
        idleAfter();
        for (;;) {
          if (!changed && !idle) await new Promise<void>((resolve) => (wake = resolve));
          wake = undefined;
          ctx.signal.throwIfAborted();
          if (changed) {
            changed = false;
            const now = current();
            if (now !== last) {
              last = now;
              yield { status: now };
              idleAfter();
              continue;
            }
          }
          if (idle) return;
        }
      } finally {
        clearTimeout(timer);
        unsubscribe();
        ctx.signal.removeEventListener("abort", onAbort);
        release();
      }
    },
  });
}
