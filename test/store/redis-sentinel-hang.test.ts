import { describe } from "vitest";
import { failoverChecks, useFailover } from "./sentinel-failover";

/**
 * Sessions in Redis behind Sentinel, the master paused (SIGSTOP, by its pid)
 * while clients call: it answers nothing and closes no connection, as a hung
 * server or one cut off without a reset. The sentinels promote the replica;
 * the service must leave the silent connection to find it, not wait for the
 * old master to come back.
 */
const failover = useFailover((set) => set.pauseMaster());

describe("the Redis master hung behind Sentinel, under load", () => {
  failoverChecks(failover);
});
