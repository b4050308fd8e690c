import { inChildSpan } from "../core/telemetry";

/**
 * `store` with a span around each of `operations` (`<system> <operation>`,
 * the database system and operation as attributes, never keys or values),
 * for when tracing is on; the composition root leaves stores unwrapped when
 * it is off. Only inside a call's span: a readiness probe's ping is no trace.
 * A Proxy keeps every other member (kind, usage…) as it is.
 */
export function traced<T extends object>(store: T, system: string, operations: readonly (keyof T & string)[]): T {
  const wrapped = new Set<string>(operations);
  return new Proxy(store, {
    get(target, property, receiver) {
      const value: unknown = Reflect.get(target, property, receiver);
      if (typeof property !== "string" || !wrapped.has(property) || typeof value !== "function") return value;
      return (...args: unknown[]) =>
        inChildSpan(`${system} ${property}`, { "db.system.name": system, "db.operation.name": property }, () =>
          Promise.resolve(value.apply(target, args)),
        );
    },
  });
}

/** The memory store's queries. */
export const MEMORY_STORE_OPERATIONS = [
  "upsert",
  "upsertMany",
  "successorsAsOf",
  "get",
  "getMany",
  "delete",
  "keywordSearch",
  "vectors",
  "count",
  "checkWritable",
] as const;

/** The session store's commands. */
export const SESSION_STORE_OPERATIONS = [
  "getJson",
  "setJson",
  "append",
  "list",
  "claim",
  "increment",
  "counter",
  "delete",
  "touch",
  "ping",
] as const;
