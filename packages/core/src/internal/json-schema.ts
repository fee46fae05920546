import type { JsonObject } from "../json.js";

/**
 * Checks a value against the JSON Schema subset that tool parameters use: type (one or several),
 * properties, required, additionalProperties (false or a schema), items, enum, const, minimum,
 * maximum, minLength, maxLength, minItems, maxItems, anyOf/oneOf, nullable types. Unknown keywords
 * are ignored (accepted). Returns one message per problem, each starting with the JSON path.
 */
export function validateJsonSchema(schema: JsonObject, value: unknown, path = "$"): string[] {
  const problems: string[] = [];
  const s = schema as Record<string, unknown>;
  if (Array.isArray(s.anyOf) || Array.isArray(s.oneOf)) {
    const options = (s.anyOf ?? s.oneOf) as JsonObject[];
    const passing = options.filter((option) => validateJsonSchema(option, value, path).length === 0).length;
    if (passing === 0 || (s.oneOf && passing > 1))
      problems.push(`${path}: does not match ${s.oneOf ? "exactly one" : "any"} of the allowed shapes`);
  }
  if (s.const !== undefined && JSON.stringify(s.const) !== JSON.stringify(value)) {
    problems.push(`${path}: must be ${JSON.stringify(s.const)}`);
  }
  if (Array.isArray(s.enum) && !s.enum.some((e) => JSON.stringify(e) === JSON.stringify(value))) {
    problems.push(`${path}: must be one of ${s.enum.map((e) => JSON.stringify(e)).join(", ")}`);
  }
  const types =
    s.type === undefined ? undefined : Array.isArray(s.type) ? (s.type as string[]) : [s.type as string];
  if (types && !types.some((t) => hasType(t, value))) {
    problems.push(`${path}: expected ${types.join(" or ")}, got ${describe(value)}`);
    return problems;
  }
  if (typeof value === "string") {
    if (typeof s.minLength === "number" && value.length < s.minLength)
      problems.push(`${path}: shorter than ${s.minLength}`);
    if (typeof s.maxLength === "number" && value.length > s.maxLength)
      problems.push(`${path}: longer than ${s.maxLength}`);
  }
  if (typeof value === "number") {
    if (typeof s.minimum === "number" && value < s.minimum)
      problems.push(`${path}: below the minimum ${s.minimum}`);
    if (typeof s.maximum === "number" && value > s.maximum)
      problems.push(`${path}: above the maximum ${s.maximum}`);
  }
  if (Array.isArray(value)) {
    if (typeof s.minItems === "number" && value.length < s.minItems)
      problems.push(`${path}: fewer than ${s.minItems} items`);
    if (typeof s.maxItems === "number" && value.length > s.maxItems)
      problems.push(`${path}: more than ${s.maxItems} items`);
    if (s.items && typeof s.items === "object" && !Array.isArray(s.items)) {
      for (const [i, item] of value.entries()) {
        problems.push(...validateJsonSchema(s.items as JsonObject, item, `${path}[${i}]`));
      }
    }
  }
  if (typeof value === "object" && value !== null && !Array.isArray(value)) {
    const object = value as Record<string, unknown>;
    const properties = (s.properties ?? {}) as Record<string, JsonObject>;
    for (const key of (s.required as string[] | undefined) ?? []) {
      if (object[key] === undefined) problems.push(`${path}.${key}: is required`);
    }
    for (const [key, child] of Object.entries(object)) {
      if (Object.hasOwn(properties, key))
        problems.push(...validateJsonSchema(properties[key]!, child, `${path}.${key}`));
      else if (s.additionalProperties === false) problems.push(`${path}.${key}: is not an allowed property`);
      else if (typeof s.additionalProperties === "object" && s.additionalProperties !== null) {
        problems.push(...validateJsonSchema(s.additionalProperties as JsonObject, child, `${path}.${key}`));
      }
    }
  }
  return problems;
}

function hasType(type: string, value: unknown): boolean {
  switch (type) {
    case "object":
      return typeof value === "object" && value !== null && !Array.isArray(value);
    case "array":
      return Array.isArray(value);
    case "string":
      return typeof value === "string";
    case "integer":
      return typeof value === "number" && Number.isInteger(value);
    case "number":
      return typeof value === "number" && Number.isFinite(value);
    case "boolean":
      return typeof value === "boolean";
    case "null":
      return value === null;
    default:
      return true;
  }
}

function describe(value: unknown): string {
  if (value === null) return "null";
  if (Array.isArray(value)) return "array";
  return typeof value === "number" && Number.isInteger(value) ? "integer" : typeof value;
}
