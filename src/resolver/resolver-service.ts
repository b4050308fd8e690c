import type { ConnectRouter } from "@connectrpc/connect";
import { LogicPropertyResolverService } from "../../gen/contextloader/resolver/v1/resolver_pb";
import { notBuiltYet } from "../errors/tool-error";

/** Registers LogicPropertyResolverService. */
export function registerResolver(router: ConnectRouter): void {
  router.service(LogicPropertyResolverService, {
    resolveLogicProperties() {
      throw notBuiltYet(
        "contextloader.resolver.v1.LogicPropertyResolverService/ResolveLogicProperties",
        5,
        "the logic property resolver",
      );
    },
  });
}
