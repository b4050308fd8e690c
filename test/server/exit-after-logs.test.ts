import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pino } from "pino";
import { afterEach, describe, expect, it } from "vitest";
import { exitAfterLogs } from "../../src/exit-after-logs";

/**
 * The exit's wait for the buffered log lines (src/exit-after-logs.ts), with a
 * real destination writing to a file, as main.ts makes it (asynchronous,
 * lines held until 8 KiB). The process-level cases (a closed pipe, and a
 * stalled one, which ends at the deadline) are in broken-log-pipe.test.ts.
 */
const MIN_LENGTH = 8192;

let dir: string | undefined;
afterEach(() => {
  if (dir !== undefined) rmSync(dir, { recursive: true, force: true });
  dir = undefined;
});

function fileDestination() {
  dir = mkdtempSync(join(tmpdir(), "exit-after-logs-"));
  const file = join(dir, "log");
  const destination = pino.destination({ dest: file, sync: false, minLength: MIN_LENGTH, mkdir: true });
  return { file, destination, ready: new Promise<void>((resolve) => destination.once("ready", () => resolve())) };
}

/** Resolves with the exit code and the file's content when `exit` is called. */
function exitSeen(file: string) {
  let seen: (value: { code: number; content: string }) => void = () => {};
  const called = new Promise<{ code: number; content: string }>((resolve) => {
    seen = resolve;
  });
  return { called, exit: (code: number) => seen({ code, content: readFileSync(file, "utf8") }) };
}

describe("exitAfterLogs", () => {
  it("writes the lines logged while a write was under way before it exits", async () => {
    const { file, destination, ready } = fileDestination();
    await ready;
    const { called, exit } = exitSeen(file);
    destination.write("first line\n");
    destination.flush(); // a write under way
    destination.write("logged during that write\n"); // held: fewer bytes than minLength
    exitAfterLogs(destination, 5000, exit)(0);
    const { code, content } = await called;
    expect(code).toBe(0);
    expect(content).toBe("first line\nlogged during that write\n");
    // Destroyed, so pino's exit hook has nothing to write synchronously.
    expect(() => destination.write("after the exit\n")).toThrow(/destroyed/);
  });

  it("writes a buffer of many chunks", async () => {
    const { file, destination, ready } = fileDestination();
    await ready;
    const { called, exit } = exitSeen(file);
    const line = `${"x".repeat(99)}\n`;
    for (let i = 0; i < 1000; i += 1) destination.write(line); // 100 kB: writes start at 8 KiB, in 16 KiB chunks
    destination.write("last\n");
    exitAfterLogs(destination, 5000, exit)(1);
    const { code, content } = await called;
    expect(code).toBe(1);
    expect(content).toBe(`${line.repeat(1000)}last\n`);
  });

  it("counts its first call only: a second signal after the first", async () => {
    const { file, destination, ready } = fileDestination();
    await ready;
    const codes: number[] = [];
    const { called, exit } = exitSeen(file);
    const exitOnce = exitAfterLogs(destination, 5000, (code) => {
      codes.push(code);
      exit(code);
    });
    destination.write("stopping\n");
    exitOnce(1);
    exitOnce(0);
    await called;
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(codes).toEqual([1]);
  });
});
