import type { pino } from "pino";

type Destination = ReturnType<typeof pino.destination>;

/**
 * Returns the process's exit for a buffered log `destination`: it writes the
 * buffered lines, then exits with the code it was called with; after
 * `waitMs`, without the lines still unwritten. Only its first call counts (a
 * second signal and the end of the graceful stop may both ask).
 *
 * Exiting with lines in the buffer would leave them to pino's exit hook, a
 * synchronous write that sonic-boom retries for ever when it fails (EPIPE,
 * EAGAIN): a service whose log reader closed the pipe (a shipper that died,
 * `| head`) or stopped reading would never stop. So the lines are written
 * asynchronously, where a broken pipe is an error on which pino stops logging,
 * and the destination is destroyed before the exit, which the hook skips.
 *
 * A flush's callback does not mean the buffer is empty: when a write was under
 * way, it comes when that write ends, and the lines logged meanwhile (fewer
 * than the destination's minLength) are still buffered. So flushes repeat
 * until one writes nothing, which it does when the buffer is empty or its
 * write failed.
 */
export function exitAfterLogs(
  destination: Destination,
  waitMs: number,
  exit: (code: number) => void = (code) => process.exit(code),
): (code: number) => void {
  let exiting = false;
  return (code) => {
    if (exiting) return;
    exiting = true;
    let written = 0;
    const countWritten = (bytes: number) => {
      written += bytes;
    };
    const end = () => {
      clearTimeout(deadline);
      destination.off("write", countWritten);
      destination.destroy();
      exit(code);
    };
    const deadline = setTimeout(end, waitMs);
    const flushUntilEmpty = () => {
      written = 0;
      // The callback's error is the failed write's, or fsync's on a pipe (EINVAL), which says nothing.
      destination.flush(() => (written === 0 ? end() : flushUntilEmpty()));
    };
    destination.on("write", countWritten);
    flushUntilEmpty();
  };
}
