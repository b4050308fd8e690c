import type { Json } from "../../../core/json";
import { text } from "../../../errors/text";
import { ToolError } from "../../../errors/tool-error";

/**
 * A bound tool's arguments as one JSON Schema object, the `dynamic_params`
 * an agent fills: an operator's OpenAPI parameters (header, path, query) and
 * request body properties flattened side by side, or an MCP tool's input
 * schema. `$ref`s are resolved at most MAX_REF_DEPTH deep; a cycle or a
 * deeper reference is cut to `{type, description}`. Each property keeps only
 * what a function call needs: type (string when unsaid), description, enum,
 * properties and required (objects), items (arrays).
 */

/** How deep `$ref`s are followed (the platform tool's limit). */
export const MAX_REF_DEPTH = 3;

export interface ObjectSchema {
  type: "object";
  properties: Record<string, Json>;
  required?: string[];
}

type JsonObject = Record<string, Json>;

const isObject = (v: Json | undefined): v is JsonObject => v !== null && typeof v === "object" && !Array.isArray(v);

/**
 * The arguments of a tool box tool from its `api_spec`: every parameter by
 * name (required when it says so) and every property of the JSON request
 * body. A name defined in two places (a query parameter and a body property)
 * cannot be one argument: FAILED_PRECONDITION naming both places.
 */
export function fromOpenApi(toolName: string, apiSpec: JsonObject): ObjectSchema {
  const components = isObject(apiSpec["components"]) ? apiSpec["components"] : {};
  const defs = isObject(components["schemas"]) ? components["schemas"] : {};
  const resolver = new RefResolver(toolName, "#/components/schemas/", defs);
  const out: ObjectSchema = { type: "object", properties: {} };
  const required: string[] = [];
  const placeOf = new Map<string, string>();
  const add = (name: string, place: string, schema: Json, isRequired: boolean) => {
    const where = placeOf.get(name);
    if (where !== undefined) throw duplicateParameter(toolName, name, where, place);
    placeOf.set(name, place);
    out.properties[name] = schema;
    if (isRequired) required.push(name);
  };

  const parameters = Array.isArray(apiSpec["parameters"]) ? apiSpec["parameters"] : [];
  for (const p of parameters) {
    if (!isObject(p) || typeof p["name"] !== "string" || p["name"] === "") continue;
    const schema = resolver.resolve(isObject(p["schema"]) ? p["schema"] : {}, 0, []);
    const description = typeof p["description"] === "string" ? p["description"] : undefined;
    const withDescription =
      isObject(schema) && description && !schema["description"] ? { ...schema, description } : schema;
    add(p["name"], String(p["in"] ?? "query"), withDescription, p["required"] === true);
  }

  const body = jsonBodySchema(apiSpec["request_body"]);
  if (body !== undefined) {
    const resolved = resolver.resolve(body, 0, []);
    if (isObject(resolved) && isObject(resolved["properties"])) {
      const bodyRequired = Array.isArray(resolved["required"]) ? resolved["required"] : [];
      for (const [name, schema] of Object.entries(resolved["properties"]))
        add(name, "body", schema, bodyRequired.includes(name));
    } else {
      add("body", "body", resolved, true);
    }
  }
  if (required.length > 0) out.required = required;
  return out;
}

/** The arguments of an MCP tool: its input schema, `#/$defs/` references resolved and `$defs` dropped. */
export function fromMcpInputSchema(toolName: string, inputSchema: JsonObject): ObjectSchema {
  const defs = isObject(inputSchema["$defs"]) ? inputSchema["$defs"] : {};
  const resolved = new RefResolver(toolName, "#/$defs/", defs).resolve(inputSchema, 0, []);
  const properties = isObject(resolved) && isObject(resolved["properties"]) ? resolved["properties"] : {};
  const required = isObject(resolved) && Array.isArray(resolved["required"]) ? resolved["required"] : [];
  const out: ObjectSchema = { type: "object", properties };
  const names = required.filter((r): r is string => typeof r === "string");
  if (names.length > 0) out.required = names;
  return out;
}

/**
 * The schema without the arguments an action fixes: for each leaf of
 * `fixed` (its nested objects followed where the schema has properties), the
 * property is dropped, and an object left with no property goes too.
 */
export function withoutFixed(schema: ObjectSchema, fixed: JsonObject): ObjectSchema {
  const copy = structuredClone(schema);
  prune(copy as unknown as JsonObject, fixed);
  return copy;
}

/** Removes fixed leaves from `node` (an object schema); true when it has no property left. */
function prune(node: JsonObject, fixed: JsonObject): boolean {
  const properties = isObject(node["properties"]) ? node["properties"] : undefined;
  if (!properties) return false;
  for (const [key, value] of Object.entries(fixed)) {
    const child = properties[key];
    if (child === undefined) continue;
    const goesDeeper = isObject(value) && isObject(child) && isObject(child["properties"]);
    if (goesDeeper && !prune(child, value)) continue;
    delete properties[key];
    if (Array.isArray(node["required"])) {
      const left = node["required"].filter((r) => r !== key);
      if (left.length > 0) node["required"] = left;
      else delete node["required"];
    }
  }
  return Object.keys(properties).length === 0;
}

function jsonBodySchema(requestBody: Json | undefined): JsonObject | undefined {
  if (!isObject(requestBody) || !isObject(requestBody["content"])) return undefined;
  const json = requestBody["content"]["application/json"];
  return isObject(json) && isObject(json["schema"]) ? json["schema"] : undefined;
}

class RefResolver {
  constructor(
    private readonly toolName: string,
    private readonly prefix: string,
    private readonly defs: JsonObject,
  ) {}

  /** The schema with its references resolved; `trail` holds the references being expanded (cycle check). */
  resolve(schema: JsonObject, depth: number, trail: string[]): Json {
    const ref = schema["$ref"];
    if (typeof ref === "string") {
      const target = this.target(ref);
      if (trail.includes(ref) || depth >= MAX_REF_DEPTH) return cut(target);
      return this.resolve(target, depth + 1, [...trail, ref]);
    }
    const out: JsonObject = {};
    const type =
      typeof schema["type"] === "string" ? schema["type"] : isObject(schema["properties"]) ? "object" : "string";
    out["type"] = type;
    if (typeof schema["description"] === "string" && schema["description"] !== "")
      out["description"] = schema["description"];
    if (Array.isArray(schema["enum"])) out["enum"] = schema["enum"];
    if (isObject(schema["properties"])) {
      const properties: JsonObject = {};
      for (const [name, sub] of Object.entries(schema["properties"]))
        properties[name] = isObject(sub) ? this.resolve(sub, depth, trail) : { type: "string" };
      out["type"] = "object";
      out["properties"] = properties;
      if (Array.isArray(schema["required"]) && schema["required"].length > 0) out["required"] = schema["required"];
    }
    if (isObject(schema["items"])) out["items"] = this.resolve(schema["items"], depth, trail);
    return out;
  }

  private target(ref: string): JsonObject {
    const name = ref.startsWith(this.prefix) ? ref.slice(this.prefix.length) : undefined;
    const target = name === undefined ? undefined : this.defs[name];
    if (!isObject(target)) {
      throw new ToolError({
        code: "failed_precondition",
        reason: "TOOL_SCHEMA_BROKEN",
        message: text(
          `the definition of tool ${this.toolName} refers to ${ref}, which it does not define (references must point into ${this.prefix})`,
          `工具 ${this.toolName} 的定义引用了 ${ref}，但它没有定义这个引用（引用必须指向 ${this.prefix} 之下）`,
        ),
        metadata: { tool: this.toolName, ref },
        hint: {
          message: text(
            "The tool's definition must be fixed on the platform; calling again will fail the same way. Choose another action type meanwhile.",
            "需要在平台上修正这个工具的定义；再次调用会同样失败。在此之前请选择其他行动类型。",
          ),
        },
      });
    }
    return target;
  }
}

/** A reference not followed: what it is, without what is inside. */
function cut(target: JsonObject): JsonObject {
  const type = typeof target["type"] === "string" ? target["type"] : "object";
  const description = typeof target["description"] === "string" ? target["description"] : "";
  return description === "" ? { type } : { type, description };
}

function duplicateParameter(toolName: string, name: string, first: string, second: string): ToolError {
  return new ToolError({
    code: "failed_precondition",
    reason: "DUPLICATE_TOOL_PARAMETER",
    message: text(
      `tool ${toolName} defines the parameter "${name}" twice (in ${first} and in ${second}), so its arguments cannot be one object`,
      `工具 ${toolName} 的参数名 '${name}' 在不同位置重复出现（${first} 和 ${second}），它的参数无法合成一个对象`,
    ),
    metadata: { tool: toolName, parameter: name, locations: `${first},${second}` },
    hint: {
      message: text(
        "The tool's definition must be fixed on the platform (rename one of the two); calling again will fail the same way.",
        "需要在平台上修正这个工具的定义（给两者之一改名）；再次调用会同样失败。",
      ),
    },
  });
}
