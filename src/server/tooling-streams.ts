import { type Text, text } from "../errors/text";
import { ToolError } from "../errors/tool-error";

/** The share of STREAMS_MAX_OPEN that long-lived tooling streams may hold, so agents' calls always keep the rest. */
const TOOLING_SHARE = 4;

/**
 * The long-lived streams that take no admission slot and need no token:
 * grpc.health.v1 Watch and server reflection. Agents' streams (Recall) hold an
 * admission slot for their length; these do not (a probe must get through an
 * overloaded server), so they get a budget of their own: at most a quarter of
 * the process's open streams, and a watch that saw no change for `watchIdleMs`
 * ends (the client watches again). Past the budget a new one is refused
 * RESOURCE_EXHAUSTED at once, before it holds anything.
 */
export class ToolingStreams {
  private open = 0;
  readonly limit: number;
  readonly watchIdleMs: number;

  constructor(settings: { totalStreams: number; watchIdleMs: number }) {
    this.limit = Math.max(1, Math.floor(settings.totalStreams / TOOLING_SHARE));
    this.watchIdleMs = settings.watchIdleMs;
  }

  /** Streams of this kind open now. */
  get inUse(): number {
    return this.open;
  }

  /** Whether the budget is spent: a new stream would be refused. */
  get full(): boolean {
    return this.open >= this.limit;
  }

  /** What a refused stream is told. */
  refusal(kind: string): Text {
    return text(
      `${this.limit} health watches and reflection streams are open, the most this server holds (a quarter of STREAMS_MAX_OPEN); ${kind} refused`,
      `已打开 ${this.limit} 个健康监视和反射流，这是本服务器能保持的上限（STREAMS_MAX_OPEN 的四分之一）；${kind} 被拒绝`,
    );
  }

  /** Counts one stream of `kind` as open; returns its release (idempotent), or throws when the budget is spent. */
  take(kind: string): () => void {
    if (this.full) {
      throw new ToolError({
        code: "resource_exhausted",
        reason: "TOO_MANY_STREAMS",
        message: this.refusal(kind),
        metadata: { limit: String(this.limit) },
        retryAfterMs: 1000,
        hint: {
          message: text(
            "Close streams you no longer read, or use Health/Check for a one-off probe; retry later.",
            "关闭不再读取的流，或用 Health/Check 做一次性探测；稍后重试。",
          ),
        },
      });
    }
    this.open++;
    let released = false;
    return () => {
      if (released) return;
      released = true;
      this.open--;
    };
  }
}
