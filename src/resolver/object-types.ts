import type { CallContext } from "../core/call-context";
import { text } from "../errors/text";
import { ToolError } from "../errors/tool-error";
import type { KnowledgeNetworkBackend } from "../kn/backend";
import type { ObjectType } from "../kn/types";

/** A time-limited cache of object type definitions (off unless configured: spec §6.1 fetches every call). */
export class ObjectTypeCache {
  private readonly entries = new Map<string, { value: ObjectType; expiresAt: number }>();
  constructor(private readonly ttlMs: number) {}
  get(key: string): ObjectType | undefined {
    const e = this.entries.get(key);
    if (!e || e.expiresAt <= Date.now()) return undefined;
    return e.value;
  }
  set(key: string, value: ObjectType): void {
    this.entries.set(key, { value, expiresAt: Date.now() + this.ttlMs });
  }
}

/** The definition of `otId` in `knId`, from the cache when it is on; NOT_FOUND OBJECT_TYPE_NOT_FOUND when there is none. */
export async function objectType(
  from: { backend: KnowledgeNetworkBackend; objectTypeCache: ObjectTypeCache | undefined },
  ctx: CallContext,
  knId: string,
  otId: string,
): Promise<ObjectType> {
  const key = `${knId}/${otId}`;
  const cached = from.objectTypeCache?.get(key);
  if (cached) return cached;
  const [ot] = await from.backend.getObjectTypes(ctx, knId, [otId]);
  if (!ot) {
    throw new ToolError({
      code: "not_found",
      reason: "OBJECT_TYPE_NOT_FOUND",
      message: text(
        `object type ${otId} does not exist in knowledge network ${knId}`,
        `知识网络 ${knId} 中不存在对象类型 ${otId}`,
      ),
    });
  }
  from.objectTypeCache?.set(key, ot);
  return ot;
}
