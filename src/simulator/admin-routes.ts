import type { Json } from "../core/json";
import type { IncomingRequest, Reply } from "./exchange";
import { type FaultInjector, faultsSchema } from "./faults";
import { errorBody } from "./platform-errors";
import type { RequestLog } from "./request-log";

/** Where the admin routes live; requests under it are neither faulted nor logged. */
export const ADMIN_PREFIX = "/__sim/";

/**
 * The simulator's own routes, for a test or a benchmark in another process:
 * `POST /__sim/faults` changes any subset of the faults and answers them all,
 * `GET /__sim/requests` answers the request log.
 */
export function answerAdmin(request: IncomingRequest, faults: FaultInjector, requests: RequestLog): Reply {
  const { method } = request;
  const path = request.url.pathname;
  if (method === "POST" && path === `${ADMIN_PREFIX}faults`) {
    const parsed = faultsSchema.safeParse(request.body);
    if (!parsed.success) {
      const problems = parsed.error.issues.map((i) => `${i.path.join(".")}: ${i.message}`).join("; ");
      const solution = "Send {latencyMs, jitterMs, errorRate, timeoutRate, malformedRate, match} (any subset).";
      return { status: 400, body: errorBody("Simulator.InvalidParameter", problems, solution) };
    }
    faults.set(parsed.data);
    const now = faults.current();
    return { status: 200, body: { faults: { ...now, match: now.match ?? null } } };
  }
  if (method === "GET" && path === `${ADMIN_PREFIX}requests`) {
    return { status: 200, body: { requests: requests.list() as unknown as Json[] } };
  }
  const solution = "Use POST /__sim/faults or GET /__sim/requests.";
  return { status: 404, body: errorBody("Simulator.RouteNotFound", `no admin route ${method} ${path}`, solution) };
}
