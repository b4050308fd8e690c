import { Code, ConnectError, createConnectRouter, type ConnectRouter, type ConnectRouterOptions } from "@connectrpc/connect";
import {
  compressionBrotli,
  compressionGzip,
  universalRequestFromNodeRequest,
  universalResponseToNodeResponse,
} from "@connectrpc/connect-node";
import type { Logger } from "pino";
import type { NodeHandler, NodeServerRequest, NodeServerResponse } from "./node-types";

/**
 * The Node request listener for every RPC path, with `fallback` for any other
 * path. It does what connectNodeAdapter does, except that a response that
 * cannot be written is logged through pino (with the rpc) instead of
 * console.error.
 */
export function createRpcHandler(opts: {
  routes: (router: ConnectRouter) => void;
  routerOptions: ConnectRouterOptions;
  fallback: NodeHandler;
  log: Logger;
}): NodeHandler {
  const router = createConnectRouter({ acceptCompression: [compressionGzip, compressionBrotli], ...opts.routerOptions });
  opts.routes(router);
  const byPath = new Map(router.handlers.map((h) => [h.requestPath, h]));
  return (req: NodeServerRequest, res: NodeServerResponse) => {
    const path = (req.url ?? "").split("?", 1)[0] ?? "";
    const handler = byPath.get(path);
    if (!handler) {
      opts.fallback(req, res);
      return;
    }
    const uReq = universalRequestFromNodeRequest(req, res, undefined, undefined);
    handler(uReq)
      .then((uRes) => universalResponseToNodeResponse(uRes, res))
      .catch((reason: unknown) => {
        // The client went away: nothing to answer and nothing wrong with us.
        if (ConnectError.from(reason).code === Code.Aborted) return;
        opts.log.warn({ err: reason, rpc: `${handler.service.typeName}/${handler.method.name}` }, "could not write the rpc response");
      });
  };
}
