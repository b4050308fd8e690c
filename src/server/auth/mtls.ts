import type { TLSSocket } from "node:tls";
import type { NodeServerRequest } from "../node-types";
import { certificateRequired } from "./errors";
import { identityFromHeaders } from "./headers";
import { type Authenticator, headerGetter } from "./result";

/**
 * AUTH_MODE=mtls: the listener asks every TLS client for a certificate and
 * checks it against TLS_CLIENT_CA without refusing the connection (so probes
 * still get through); a request is authenticated when its connection's
 * certificate verified. Such a client (the gateway) vouches for the identity
 * headers it sends; from any other the headers are not read.
 */
export function mtlsAuthenticator(): Authenticator {
  return {
    authenticate(req: NodeServerRequest) {
      // Over HTTP/2 req.socket stands for the session's TLS socket.
      const socket = req.socket as Partial<TLSSocket> | null;
      if (socket?.authorized !== true) return { ok: false, error: certificateRequired() };
      return identityFromHeaders(headerGetter(req));
    },
  };
}
