import type { JsonObject } from "@openrath/core";

const EMPTY_SCHEMA: JsonObject = Object.freeze({ type: "object", properties: {} });

/**
 * JSON Schema of a tool's arguments from an MCP tool's `inputSchema`: the schema without its
 * `$schema` key (some providers refuse it), always `type: "object"` with `properties`; an absent
 * or malformed schema is an empty object schema.
 */
export function parametersOf(inputSchema: unknown): JsonObject {
  if (typeof inputSchema !== "object" || inputSchema === null || Array.isArray(inputSchema))
    return EMPTY_SCHEMA;
  const { $schema: _dropped, ...rest } = inputSchema as Record<string, unknown>;
  return {
    ...(rest as JsonObject),
    type: "object",
    ...(rest.properties === undefined ? { properties: {} } : {}),
  };
}
