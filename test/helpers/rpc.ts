import type { DescService } from "@bufbuild/protobuf";
import { type Client, ConnectError, createClient } from "@connectrpc/connect";
import { createConnectTransport } from "@connectrpc/connect-node";

/** The error a call failed with; a call that succeeds fails the test. */
export async function failure(call: Promise<unknown>): Promise<ConnectError> {
  return call.then(
    () => {
      throw new Error("expected the call to fail");
    },
    (err: unknown) => ConnectError.from(err),
  );
}

/** A Connect (JSON, HTTP/1.1) client of `service` at `baseUrl` that sends these headers on every call. */
export function clientWith<S extends DescService>(
  service: S,
  baseUrl: string,
  headers: Record<string, string> = {},
): Client<S> {
  return createClient(
    service,
    createConnectTransport({
      baseUrl,
      httpVersion: "1.1",
      interceptors: [
        (next) => (req) => {
          for (const [k, v] of Object.entries(headers)) req.header.set(k, v);
          return next(req);
        },
      ],
    }),
  );
}
