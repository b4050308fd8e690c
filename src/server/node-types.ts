import type * as http from "node:http";
import type * as http2 from "node:http2";

/** A request from the HTTP/1.1 or the HTTP/2 server: both reach the same handler. */
export type NodeServerRequest = http.IncomingMessage | http2.Http2ServerRequest;
/** The matching response. */
export type NodeServerResponse = http.ServerResponse | http2.Http2ServerResponse;
/** A request listener both servers accept. */
export type NodeHandler = (req: NodeServerRequest, res: NodeServerResponse) => void;
