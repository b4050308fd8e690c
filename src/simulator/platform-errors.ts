import type { Json } from "../core/json";
import type { ErrorCode, ToolError } from "../errors/tool-error";
import type { Reply } from "./exchange";

/**
 * The platform's error bodies `{error_code, description, solution, error_link,
 * error_details}`, with error codes `<Service>.<Kind>` as its services name them.
 */

/** The platform services whose REST contract the simulator serves (ontology-manager is BknBackend since 0.8). */
export type PlatformService = "OntologyManager" | "BknBackend" | "OntologyQuery" | "AgentOperatorIntegration";

const SERVICE_PREFIXES: [string, PlatformService][] = [
  ["/api/ontology-manager/", "OntologyManager"],
  ["/api/bkn-backend/", "BknBackend"],
  ["/api/ontology-query/", "OntologyQuery"],
  ["/api/agent-operator-integration/", "AgentOperatorIntegration"],
];

/** The platform service a path belongs to, by its first segments. */
export function platformServiceOf(pathname: string): PlatformService | undefined {
  return SERVICE_PREFIXES.find(([prefix]) => pathname.startsWith(prefix))?.[1];
}

export function errorBody(errorCode: string, description: string, solution: string): Json {
  return { error_code: errorCode, description, solution, error_link: "", error_details: "" };
}

/** The service a path belongs to, for the error code of an answer no route gave (a fault, an unknown path). */
export function serviceOf(pathname: string): PlatformService | "DataRetrieval" | "Simulator" {
  if (pathname.startsWith("/tools/")) return "DataRetrieval";
  return platformServiceOf(pathname) ?? "Simulator";
}

/** A backend's ToolError as `service` answers it: the status of its kind, its violations as error_details. */
export function toolErrorReply(service: PlatformService, err: ToolError): Reply {
  return {
    status: statusOf(err.code),
    body: {
      error_code: `${service}.${errorSuffix(err)}`,
      // The platform answers in English here: the simulator stands in for it, not for this service's callers.
      description: err.text.en,
      solution: err.hint?.message.en ?? "",
      error_link: "",
      error_details:
        err.violations.length > 0 ? err.violations.map((v) => ({ field: v.field, description: v.description.en })) : "",
    },
  };
}

function statusOf(code: ErrorCode): number {
  const statuses: Partial<Record<ErrorCode, number>> = {
    invalid_argument: 400,
    unauthenticated: 401,
    permission_denied: 403,
    not_found: 404,
    failed_precondition: 409,
    unavailable: 503,
    deadline_exceeded: 504,
  };
  return statuses[code] ?? 500;
}

/** "OBJECT_TYPE_NOT_FOUND" → "ObjectType.NotFound"; other codes by their kind, as the platform names them. */
function errorSuffix(err: ToolError): string {
  switch (err.code) {
    case "not_found": {
      const thing = err.reason.replace(/_NOT_FOUND$/, "");
      return thing === err.reason ? "NotFound" : `${pascal(thing)}.NotFound`;
    }
    case "invalid_argument":
      return "InvalidParameter";
    case "failed_precondition":
      return "FailedPrecondition";
    case "unauthenticated":
      return "Unauthorized";
    case "permission_denied":
      return "Forbidden";
    case "unavailable":
      return "ServiceUnavailable";
    case "deadline_exceeded":
      return "Timeout";
    default:
      return "InternalError";
  }
}

function pascal(upperSnake: string): string {
  return upperSnake
    .toLowerCase()
    .split("_")
    .map((w) => w.charAt(0).toUpperCase() + w.slice(1))
    .join("");
}
