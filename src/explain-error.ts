/**
 * `npm run -s explain-error`: reads what `buf curl` (or curl over Connect JSON) printed and
 * writes it back with every error detail decoded. buf curl prints details as base64 `value`s,
 * which hides the reason, the field violations and the next step an agent needs; this adds each
 * one's decoded form as `debug`, the name Connect JSON gives it. Anything that is not an error
 * passes through unchanged.
 *
 *   npx buf curl … 2>&1 | npm run -s explain-error
 */
import { readFileSync } from "node:fs";
import { createRegistry, fromBinary, toJson } from "@bufbuild/protobuf";
import { base64Decode } from "@bufbuild/protobuf/wire";
import { file_contextloader_common_v1_errors } from "../gen/contextloader/common/v1/errors_pb";
import { file_contextloader_resolver_v1_resolver } from "../gen/contextloader/resolver/v1/resolver_pb";
import { file_google_rpc_error_details } from "../gen/google/rpc/error_details_pb";
import { parseJsonStream } from "./core/json-stream";

const registry = createRegistry(
  file_google_rpc_error_details,
  file_contextloader_common_v1_errors,
  file_contextloader_resolver_v1_resolver,
);

interface Detail {
  type?: unknown;
  value?: unknown;
  debug?: unknown;
}

/** The detail with `debug` added when its type is one this service sends and its value decodes. */
function decoded(detail: Detail): Detail {
  if (typeof detail.type !== "string" || typeof detail.value !== "string" || detail.debug !== undefined) return detail;
  const desc = registry.getMessage(detail.type.replace(/^type\.googleapis\.com\//, ""));
  if (desc === undefined) return detail;
  try {
    const message = fromBinary(desc, base64Decode(detail.value));
    return { ...detail, debug: toJson(desc, message, { registry, useProtoFieldName: true }) };
  } catch {
    // Not this type's bytes: leave it as it came.
    return detail;
  }
}

function explain(value: unknown): unknown {
  if (value === null || typeof value !== "object" || Array.isArray(value)) return value;
  const details = (value as { details?: unknown }).details;
  if (!Array.isArray(details)) return value;
  return { ...value, details: details.map((d) => (d !== null && typeof d === "object" ? decoded(d as Detail) : d)) };
}

const input = readFileSync(0, "utf8");
const { values, rest } = parseJsonStream(input);
for (const value of values) process.stdout.write(`${JSON.stringify(explain(value), null, 2)}\n`);
// What follows the JSON (a message of buf curl's, say) is shown as it came.
if (rest !== "") process.stdout.write(rest.endsWith("\n") ? rest : `${rest}\n`);
