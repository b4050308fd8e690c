import { createHash } from "node:crypto";
import type { Json } from "../../../core/json";
import { type Text, text } from "../../../errors/text";
import { ToolError } from "../../../errors/tool-error";
import type { Condition, SortField } from "../../../kn/types";

/** What a cursor is bound to: a page of the same query continues it, any other query cannot. */
export interface CursorBinding {
  kn_id: string;
  ot_id: string;
  condition: Condition | undefined;
  sort: SortField[];
}

interface CursorBody {
  /** The network and object type, said plainly so a misuse can be named. */
  k: string;
  o: string;
  /** A digest of the query (condition, sort) and of `a`: another query, or an altered cursor, does not match. */
  q: string;
  /** The platform's search_after after the page that issued it. */
  a: Json[];
}

const PREFIX = "c1.";

/**
 * The `next_cursor` of a page: the platform's search_after, bound to the
 * query that produced it. Opaque to agents and stateless (any replica reads
 * it): base64url of the search_after with the network, the object type and a
 * digest of the condition and sort.
 */
export function encodeCursor(binding: CursorBinding, searchAfter: Json[]): string {
  const body: CursorBody = { k: binding.kn_id, o: binding.ot_id, q: digest(binding, searchAfter), a: searchAfter };
  return PREFIX + Buffer.from(JSON.stringify(body), "utf8").toString("base64url");
}

/**
 * The search_after a cursor carries, when it was issued for this very query;
 * INVALID_ARGUMENT naming what differs otherwise (another network or object
 * type, another condition or sort, or not a cursor at all).
 */
export function decodeCursor(cursor: string, binding: CursorBinding): Json[] {
  const body = parse(cursor);
  if (body === undefined) {
    throw badCursor(
      text(
        "is not a cursor this service issued (pass next_cursor exactly as a page returned it)",
        "不是本服务签发的游标（请原样传入某一页返回的 next_cursor）",
      ),
    );
  }
  if (body.k !== binding.kn_id || body.o !== binding.ot_id) {
    throw badCursor(
      text(
        `was issued for object type ${body.o} of ${body.k}, not ${binding.ot_id} of ${binding.kn_id}: a cursor only continues the query that returned it`,
        `是为 ${body.k} 的对象类型 ${body.o} 签发的，不是 ${binding.kn_id} 的 ${binding.ot_id}：游标只能接着返回它的那个查询`,
      ),
    );
  }
  if (body.q !== digest(binding, body.a)) {
    throw badCursor(
      text(
        "was issued for another condition or sort (or was altered): a cursor only continues the query that returned it; send that query unchanged with the cursor, or leave cursor out to start this one",
        "是为另一个条件或排序签发的（或被改动过）：游标只能接着返回它的那个查询；请把那个查询原样和游标一起发送，或不传游标从头开始这个查询",
      ),
    );
  }
  return body.a;
}

function parse(cursor: string): CursorBody | undefined {
  if (!cursor.startsWith(PREFIX)) return undefined;
  try {
    const body = JSON.parse(Buffer.from(cursor.slice(PREFIX.length), "base64url").toString("utf8")) as CursorBody;
    const ok =
      typeof body === "object" &&
      body !== null &&
      typeof body.k === "string" &&
      typeof body.o === "string" &&
      typeof body.q === "string" &&
      Array.isArray(body.a);
    return ok ? body : undefined;
  } catch {
    return undefined;
  }
}

function digest(binding: CursorBinding, searchAfter: Json[]): string {
  const text = canonical([binding.kn_id, binding.ot_id, binding.condition ?? null, binding.sort, searchAfter] as Json);
  return createHash("sha256").update(text).digest("base64url").slice(0, 22);
}

/** JSON with object keys sorted, so equal queries digest alike whatever order their keys came in. */
function canonical(value: Json | undefined): string {
  if (value === undefined) return "null";
  if (Array.isArray(value)) return `[${value.map(canonical).join(",")}]`;
  if (value !== null && typeof value === "object") {
    const keys = Object.keys(value).sort();
    return `{${keys.map((k) => `${JSON.stringify(k)}:${canonical(value[k])}`).join(",")}}`;
  }
  return JSON.stringify(value);
}

function badCursor(what: Text): ToolError {
  return new ToolError({
    code: "invalid_argument",
    reason: "INVALID_CURSOR",
    message: text(`cursor ${what.en}`, `参数 cursor ${what.zh}`),
    violations: [{ field: "cursor", description: what }],
    hint: {
      message: text(
        "Leave cursor out for the first page; then pass each page's next_cursor with the same query.",
        "第一页不传 cursor；之后用同一个查询传入每一页的 next_cursor。",
      ),
    },
  });
}
