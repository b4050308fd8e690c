import { EmbeddedBackend } from "../../src/kn/embedded/engine";
import { miniBundle } from "../fixtures/mini-bundle";
import { describeKnowledgeBackendContract } from "./backend.contract";

describeKnowledgeBackendContract("embedded engine", async () => ({
  backend: new EmbeddedBackend([miniBundle], { timeZone: "Asia/Shanghai" }),
  teardown: async () => {},
}));
