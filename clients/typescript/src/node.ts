// @context-loader/client/node: transports for Node.js (gRPC, Connect, gRPC-web) over @connectrpc/connect-node.
import type { Interceptor, Transport } from "@connectrpc/connect";
import { createConnectTransport, createGrpcTransport, createGrpcWebTransport } from "@connectrpc/connect-node";
import { type ContextLoaderClients, createContextLoaderClients } from "./clients";
import { type Identity, identityInterceptor } from "./identity";

/** Where and how a Node.js process calls the service, and as whom. */
export interface NodeTransportOptions extends Identity {
  /** The service's base URL, e.g. `http://127.0.0.1:8080` (h2c) or `https://context-loader.internal`. */
  baseUrl: string;
  /** `grpc` (the default; HTTP/2, cleartext h2c for `http://`), `connect` or `grpc-web`. */
  protocol?: "grpc" | "connect" | "grpc-web";
  /** For `connect` and `grpc-web`: `1.1` (the default) or `2`. gRPC is always HTTP/2. */
  httpVersion?: "1.1" | "2";
  /** Binary protobuf instead of JSON. Default: true for gRPC and gRPC-web, false (JSON) for Connect. */
  useBinaryFormat?: boolean;
  /** The deadline of every call that sets no `timeoutMs` of its own; sent as `grpc-timeout` / `connect-timeout-ms`. */
  defaultTimeoutMs?: number;
  /** More interceptors, run after the one that adds the identity's headers. */
  interceptors?: Interceptor[];
}

/** A transport to the service from Node.js, sending the identity's headers on every call. */
export function createNodeTransport(options: NodeTransportOptions): Transport {
  const { baseUrl, protocol = "grpc", httpVersion = "1.1", defaultTimeoutMs } = options;
  const interceptors = [identityInterceptor(options), ...(options.interceptors ?? [])];
  const common = {
    baseUrl,
    interceptors,
    ...(defaultTimeoutMs === undefined ? {} : { defaultTimeoutMs }),
  };
  switch (protocol) {
    case "grpc":
      return createGrpcTransport({ ...common, useBinaryFormat: options.useBinaryFormat ?? true });
    case "connect":
      return createConnectTransport({ ...common, httpVersion, useBinaryFormat: options.useBinaryFormat ?? false });
    case "grpc-web":
      return createGrpcWebTransport({ ...common, httpVersion, useBinaryFormat: options.useBinaryFormat ?? true });
  }
}

/** Clients of every service over one Node.js transport: `createNodeClients({ baseUrl, accountId })`. */
export function createNodeClients(options: NodeTransportOptions): ContextLoaderClients {
  return createContextLoaderClients(createNodeTransport(options));
}
