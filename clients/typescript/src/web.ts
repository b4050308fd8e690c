// @context-loader/client/web: transports for browsers (Connect, gRPC-web) over @connectrpc/connect-web and fetch.
import type { Interceptor, Transport } from "@connectrpc/connect";
import { createConnectTransport, createGrpcWebTransport } from "@connectrpc/connect-web";
import { type ContextLoaderClients, createContextLoaderClients } from "./clients";
import { type Identity, identityInterceptor } from "./identity";

/** Where and how a page calls the service, and as whom. */
export interface WebTransportOptions extends Identity {
  /**
   * The service's base URL, e.g. `https://context-loader.example.com`. From another origin the service must
   * list the page's origin in CORS_ALLOWED_ORIGINS.
   */
  baseUrl: string;
  /** `connect` (the default) or `grpc-web`. Browsers cannot speak plain gRPC. */
  protocol?: "connect" | "grpc-web";
  /** Binary protobuf instead of JSON. Default: false (JSON) for Connect, true for gRPC-web. */
  useBinaryFormat?: boolean;
  /** The deadline of every call that sets no `timeoutMs` of its own; sent as `connect-timeout-ms` / `grpc-timeout`. */
  defaultTimeoutMs?: number;
  /** More interceptors, run after the one that adds the identity's headers. */
  interceptors?: Interceptor[];
  /** A fetch of your own, e.g. to send cookies: `(input, init) => fetch(input, { ...init, credentials: "include" })`. */
  fetch?: typeof globalThis.fetch;
}

/** A transport to the service from a browser (or any runtime with fetch), sending the identity's headers on every call. */
export function createWebTransport(options: WebTransportOptions): Transport {
  const { baseUrl, protocol = "connect", defaultTimeoutMs, fetch } = options;
  const common = {
    baseUrl,
    interceptors: [identityInterceptor(options), ...(options.interceptors ?? [])],
    ...(defaultTimeoutMs === undefined ? {} : { defaultTimeoutMs }),
    ...(fetch === undefined ? {} : { fetch }),
  };
  return protocol === "grpc-web"
    ? createGrpcWebTransport({ ...common, useBinaryFormat: options.useBinaryFormat ?? true })
    : createConnectTransport({ ...common, useBinaryFormat: options.useBinaryFormat ?? false });
}

/** Clients of every service over one browser transport: `createWebClients({ baseUrl, accountId })`. */
export function createWebClients(options: WebTransportOptions): ContextLoaderClients {
  return createContextLoaderClients(createWebTransport(options));
}
