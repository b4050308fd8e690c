// @context-loader/client: what Node.js and browsers share. Transports are in "./node" and "./web".
// The generated services and messages are re-exported as they are: their names are the proto's.
export type { CallOptions, Client, Interceptor, Transport } from "@connectrpc/connect";
export { Code, ConnectError } from "@connectrpc/connect";
export * from "../../../gen/contextloader/common/v1/errors_pb";
export * from "../../../gen/contextloader/knowledge/v1/knowledge_pb";
export * from "../../../gen/contextloader/kntools/v1/kntools_pb";
export * from "../../../gen/contextloader/memrecall/v1/memrecall_pb";
export * from "../../../gen/contextloader/resolver/v1/resolver_pb";
export * from "../../../gen/google/rpc/error_details_pb";
export * from "../../../gen/google/rpc/status_pb";
export { type ContextLoaderClients, createContextLoaderClients } from "./clients";
export { type ErrorDetails, errorDetailRegistry, errorDetails, findDetails } from "./errors";
export { type Identity, identityInterceptor } from "./identity";
