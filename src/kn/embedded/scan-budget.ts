import type { CallContext } from "../../core/call-context";
import { TimeSlice } from "../../core/time-slice";
import { text } from "../../errors/text";
import { ToolError } from "../../errors/tool-error";

/**
 * Row checks one engine call may make by default (EMBEDDED_SCAN_BUDGET): a
 * row checked by one condition leaf is one unit (a regex more, by the length
 * of the text), rows an index returns or a merge visits one each. Twenty
 * million is about a second of work here.
 */
export const DEFAULT_SCAN_BUDGET = 20_000_000;

/** Rows checked between two looks at the clock and the call. */
export const SCAN_CHUNK = 64;

const NARROW = text(
  "Narrow the condition: put an indexed leaf (==, in, like, match, match_phrase or knn on a property) in an and with the others, so that only the rows it selects are checked. Every !=, not_in, not_like, comparison, range, exist, not_exist, regex or __id leaf checks each row it is given (a regex counts more, by the length of the text), and each leaf of an or scans on its own.",
  "缩小条件范围：把一个走索引的叶子条件（属性上的 ==、in、like、match、match_phrase 或 knn）和其他条件放进同一个 and，这样只检查它选出的行。每个 !=、not_in、not_like、比较、range、exist、not_exist、regex 或 __id 叶子条件都会逐行检查交给它的行（regex 按文本长度计得更多），而 or 的每个叶子条件各自扫描。",
);

/**
 * What one engine call may spend on scanning, and where a long scan pauses:
 * `charge` counts work and refuses it past the budget (RESOURCE_EXHAUSTED);
 * `pause`, called between chunks of rows, ends the scan when the call has
 * ended (its deadline: DEADLINE_EXCEEDED) and lets the event loop run when
 * the time slice is used up.
 */
export class ScanBudget {
  private used = 0;
  private readonly slice = new TimeSlice();

  constructor(
    private readonly limit: number,
    /** The call: its signal and deadline; undefined for the engine's own conditions (a bundle's). */
    private readonly call: Pick<CallContext, "signal" | "remainingMs"> | undefined,
    /** The object type scanned, for messages. */
    private readonly objectTypeId: string,
  ) {}

  /** For the conditions a bundle holds: no limit, no caller. */
  static unlimited(objectTypeId: string): ScanBudget {
    return new ScanBudget(Number.POSITIVE_INFINITY, undefined, objectTypeId);
  }

  /** Counts `units` of work; past the budget the call is refused before the work is done. */
  charge(units: number): void {
    this.used += units;
    if (this.used <= this.limit) return;
    throw new ToolError({
      code: "resource_exhausted",
      reason: "SCAN_BUDGET_EXCEEDED",
      message: text(
        `the condition on ${this.objectTypeId} needs more than ${this.limit} row checks (rows scanned × condition leaves), the embedded engine's budget for one call`,
        `${this.objectTypeId} 上的条件需要超过 ${this.limit} 次行检查（扫描的行数 × 条件叶子数），这是内置引擎一次调用的预算`,
      ),
      metadata: { scan_budget: String(this.limit), object_type_id: this.objectTypeId },
      hint: { message: NARROW },
    });
  }

  /** Between chunks of a scan: throws when the call has ended; a promise to await when others should run first. */
  pause(): Promise<void> | undefined {
    if (this.call) {
      const left = this.call.remainingMs();
      if (left !== undefined && left <= 0) {
        throw new ToolError({
          code: "deadline_exceeded",
          reason: "SCAN_DEADLINE_EXCEEDED",
          message: text(
            `the call's deadline passed while the embedded engine scanned ${this.objectTypeId} (${this.used} row checks done)`,
            `内置引擎扫描 ${this.objectTypeId} 时调用的截止时间已过（已完成 ${this.used} 次行检查）`,
          ),
          metadata: { object_type_id: this.objectTypeId },
          hint: { message: text(`${NARROW.en} Or allow the call more time.`, `${NARROW.zh}或者给这次调用更多时间。`) },
        });
      }
      this.call.signal.throwIfAborted();
    }
    return this.slice.pace();
  }
}
