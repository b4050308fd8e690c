import { execFile } from "node:child_process";
import { fileURLToPath } from "node:url";
import { fromBinary } from "@bufbuild/protobuf";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { BadRequestSchema } from "../../gen/google/rpc/error_details_pb";
import { expectedHandoffReport, handoffJson } from "../helpers/fixtures";
import { startServer, type TestServer } from "../helpers/server";

// The `buf curl` CLI (a Go client, connect-go) with no schema of its own: it
// learns every type through the server's reflection service, as a user at a
// terminal would.
//
// Every call passes --http2-prior-knowledge. Reflection is a bidi stream and
// needs HTTP/2, and buf curl with --reflect on an http:// URL switches the whole
// invocation to h2c anyway (`buf curl -v` prints "Using HTTP/2 prior knowledge
// over plain-text (h2c)" even for --protocol grpcweb or connect); no flag makes
// it reflect over h2c and then call over HTTP/1.1. The reflection stream itself
// uses the --protocol chosen (Content-Type application/grpc-web+proto for
// grpcweb), so each protocol below also reaches reflection in that protocol.
// gRPC-web and Connect over HTTP/1.1 are covered by protocols.test.ts and
// plain-http.test.ts.

const bufBin = fileURLToPath(new URL("../../node_modules/.bin/buf", import.meta.url));
const BUF_TIMEOUT_MS = 20_000;
const MEMRECALL = "contextloader.memrecall.v1.MemRecallService";
/** Every MemRecall call needs the caller's account. */
const ACCOUNT_HEADER = "x-account-id: u-1";

interface BufResult {
  exitCode: number;
  stdout: string;
  stderr: string;
}

/** Runs `buf curl <args>`; resolves with its exit code and output, rejects only if it could not run or timed out. */
function bufCurl(args: string[]): Promise<BufResult> {
  return new Promise((resolve, reject) => {
    execFile(bufBin, ["curl", ...args], { timeout: BUF_TIMEOUT_MS }, (err, stdout, stderr) => {
      if (err && typeof err.code !== "number") {
        reject(new Error(`buf curl ${args.join(" ")} did not finish: ${err.message}\n${stderr}`));
        return;
      }
      resolve({ exitCode: err ? (err.code as number) : 0, stdout, stderr });
    });
  });
}

let server: TestServer;
beforeAll(async () => {
  server = await startServer();
});
afterAll(() => server.close());

describe("buf curl through server reflection", () => {
  it("lists exactly the seven services", async () => {
    const res = await bufCurl(["--http2-prior-knowledge", "--reflect", "--list-services", server.baseUrl]);
    expect(res).toEqual(expect.objectContaining({ exitCode: 0, stderr: "" }));
    expect(res.stdout.trim().split("\n").sort()).toEqual([
      "contextloader.knowledge.v1.KnowledgeRetrievalService",
      "contextloader.kntools.v1.KnowledgeToolsService",
      "contextloader.memrecall.v1.MemRecallService",
      "contextloader.resolver.v1.LogicPropertyResolverService",
      "grpc.health.v1.Health",
      "grpc.reflection.v1.ServerReflection",
      "grpc.reflection.v1alpha.ServerReflection",
    ]);
  });

  it("lists Handoff among the methods", async () => {
    // With --reflect, --list-methods takes the base URL and lists every service's
    // methods; a URL ending in the service name is sent to the wrong path (404).
    const res = await bufCurl(["--http2-prior-knowledge", "--reflect", "--list-methods", server.baseUrl]);
    expect(res.exitCode).toBe(0);
    expect(res.stdout.trim().split("\n")).toContain(`${MEMRECALL}/Handoff`);
  });

  describe.each(["grpc", "grpcweb", "connect"])("--protocol %s", (protocol) => {
    const curl = (method: string, data: unknown) =>
      bufCurl([
        "--http2-prior-knowledge",
        "--reflect",
        "--protocol",
        protocol,
        "-H",
        ACCOUNT_HEADER,
        "-d",
        JSON.stringify(data),
        `${server.baseUrl}/${MEMRECALL}/${method}`,
      ]);

    it("prints the Handoff report, with lowerCamel JSON names", async () => {
      const res = await curl("Handoff", handoffJson);
      expect(res).toEqual(expect.objectContaining({ exitCode: 0, stderr: "" }));
      expect(JSON.parse(res.stdout)).toEqual({ success: true, message: expectedHandoffReport, taskCompleted: true });
    });

    it("exits with INVALID_ARGUMENT and prints the error JSON with a BadRequest detail on stderr", async () => {
      const res = await curl("ExpandContextWindow", { reason: "需要更早的对话", current_size: 10, requested_size: 5 });
      // buf curl exits with the RPC's code shifted left by three bits: 3 << 3.
      expect(res.exitCode).toBe(3 << 3);
      expect(res.stdout).toBe("");
      const error = JSON.parse(res.stderr) as { code: string; details: { type: string; value: string }[] };
      expect(error.code).toBe("invalid_argument");
      // buf prints each detail's bytes as base64 (and the server's debug JSON only
      // in the Connect protocol, where it travels): decode the BadRequest ourselves.
      const detail = error.details.find((d) => d.type === "google.rpc.BadRequest");
      expect(detail).toBeDefined();
      const badRequest = fromBinary(BadRequestSchema, Buffer.from(detail!.value, "base64"));
      expect(badRequest.fieldViolations.map((v) => v.field)).toEqual(["requested_size"]);
    });
  });
});
