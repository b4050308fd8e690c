import type { DescService } from "@bufbuild/protobuf";
import { type Client, createClient, type Transport } from "@connectrpc/connect";
import { createConnectTransport, createGrpcTransport, createGrpcWebTransport } from "@connectrpc/connect-node";

/** Every connect-node transport a polyglot caller might use, by name. */
export function transports(baseUrl: string): Record<string, Transport> {
  return {
    "connect+json over HTTP/1.1": createConnectTransport({ baseUrl, httpVersion: "1.1", useBinaryFormat: false }),
    "connect+proto over HTTP/1.1": createConnectTransport({ baseUrl, httpVersion: "1.1", useBinaryFormat: true }),
    "connect+json over h2c": createConnectTransport({ baseUrl, httpVersion: "2", useBinaryFormat: false }),
    "grpc over h2c": createGrpcTransport({ baseUrl }),
    "grpc-web over HTTP/1.1": createGrpcWebTransport({ baseUrl, httpVersion: "1.1" }),
    "grpc-web+json over h2c": createGrpcWebTransport({ baseUrl, httpVersion: "2", useBinaryFormat: false }),
  };
}

export function clientsFor<S extends DescService>(service: S, baseUrl: string): [string, Client<S>][] {
  return Object.entries(transports(baseUrl)).map(([name, t]) => [name, createClient(service, t)]);
}
