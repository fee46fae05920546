/**
 * Request validation as OpenViking's FastAPI/pydantic models do it, with the same error shape:
 * 400 `INVALID_ARGUMENT`, message `Invalid request parameters: <loc>: <msg>`, details
 * `{ validation_errors: [{ loc, message, type }] }`.
 */

/** One pydantic-style validation error. */
export interface ValidationIssue {
  readonly loc: string[];
  readonly message: string;
  readonly type: string;
}

/** Thrown by the validators; the fake turns it into the 400 envelope. */
export class ValidationFailure extends Error {
  constructor(readonly issues: ValidationIssue[]) {
    super(issues.map((i) => `${i.loc.join(".")}: ${i.message}`).join("; "));
  }
}

/** A field type, in pydantic's lax mode. */
export type FieldType =
  | "str"
  | "int"
  | "float"
  | "bool"
  | "dict"
  | "list"
  | "list[str]"
  | "list[dict]"
  | "str|list[str]"
  | "int|str|list[int]"
  | "bool|dict"
  | { readonly literal: readonly string[] };

/** A field of a request model. */
export interface FieldSpec {
  readonly type: FieldType;
  readonly required?: boolean;
  /** `Optional[...]`: null is accepted. */
  readonly nullable?: boolean;
}

const TRUE = new Set(["1", "on", "t", "true", "y", "yes"]);
const FALSE = new Set(["0", "off", "f", "false", "n", "no"]);

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/** Converts one value; returns an issue (without loc) when it does not fit. */
function coerce(value: unknown, type: FieldType): { value?: unknown; issue?: Omit<ValidationIssue, "loc"> } {
  if (typeof type === "object") {
    if (typeof value === "string" && type.literal.includes(value)) return { value };
    return {
      issue: {
        message: `Input should be ${type.literal.map((l) => `'${l}'`).join(" or ")}`,
        type: "literal_error",
      },
    };
  }
  switch (type) {
    case "str":
      return typeof value === "string"
        ? { value }
        : { issue: { message: "Input should be a valid string", type: "string_type" } };
    case "int":
      if (typeof value === "number" && Number.isInteger(value)) return { value };
      if (typeof value === "number") {
        return {
          issue: {
            message: "Input should be a valid integer, got a number with a fractional part",
            type: "int_from_float",
          },
        };
      }
      if (typeof value === "string" && /^\s*[-+]?\d+\s*$/.test(value))
        return { value: Number.parseInt(value, 10) };
      if (typeof value === "string") {
        return {
          issue: {
            message: "Input should be a valid integer, unable to parse string as an integer",
            type: "int_parsing",
          },
        };
      }
      return { issue: { message: "Input should be a valid integer", type: "int_type" } };
    case "float":
      if (typeof value === "number") return { value };
      if (typeof value === "string" && value.trim() !== "" && Number.isFinite(Number(value)))
        return { value: Number(value) };
      if (typeof value === "string") {
        return {
          issue: {
            message: "Input should be a valid number, unable to parse string as a number",
            type: "float_parsing",
          },
        };
      }
      return { issue: { message: "Input should be a valid number", type: "float_type" } };
    case "bool":
      if (typeof value === "boolean") return { value };
      if (value === 0 || value === 1) return { value: value === 1 };
      if (typeof value === "string" && TRUE.has(value.toLowerCase())) return { value: true };
      if (typeof value === "string" && FALSE.has(value.toLowerCase())) return { value: false };
      return typeof value === "string"
        ? {
            issue: {
              message: "Input should be a valid boolean, unable to interpret input",
              type: "bool_parsing",
            },
          }
        : { issue: { message: "Input should be a valid boolean", type: "bool_type" } };
    case "dict":
      return isObject(value)
        ? { value }
        : { issue: { message: "Input should be a valid dictionary", type: "dict_type" } };
    case "list":
      return Array.isArray(value)
        ? { value }
        : { issue: { message: "Input should be a valid list", type: "list_type" } };
    case "list[str]":
      if (!Array.isArray(value))
        return { issue: { message: "Input should be a valid list", type: "list_type" } };
      return value.every((v) => typeof v === "string")
        ? { value }
        : { issue: { message: "Input should be a valid string", type: "string_type" } };
    case "list[dict]":
      if (!Array.isArray(value))
        return { issue: { message: "Input should be a valid list", type: "list_type" } };
      return value.every(isObject)
        ? { value }
        : { issue: { message: "Input should be a valid dictionary", type: "dict_type" } };
    case "str|list[str]":
      if (typeof value === "string") return { value };
      if (Array.isArray(value) && value.every((v) => typeof v === "string")) return { value };
      return {
        issue: { message: "Input should be a valid string or a list of strings", type: "union_tag_invalid" },
      };
    case "int|str|list[int]":
      if ((typeof value === "number" && Number.isInteger(value)) || typeof value === "string")
        return { value };
      if (Array.isArray(value) && value.every((v) => typeof v === "number" && Number.isInteger(v)))
        return { value };
      return {
        issue: {
          message: "Input should be a valid integer, string or list of integers",
          type: "union_tag_invalid",
        },
      };
    case "bool|dict":
      if (typeof value === "boolean" || isObject(value)) return { value };
      return {
        issue: { message: "Input should be a valid boolean or dictionary", type: "union_tag_invalid" },
      };
  }
}

/**
 * Validates a parsed JSON body against a model. `forbidExtra` is pydantic's `extra="forbid"`.
 *
 * @throws {ValidationFailure}
 */
export function validateBody(
  body: unknown,
  fields: Readonly<Record<string, FieldSpec>>,
  forbidExtra: boolean,
): Record<string, unknown> {
  if (!isObject(body)) {
    throw new ValidationFailure([
      {
        loc: ["body"],
        message: "Input should be a valid dictionary or object to extract fields from",
        type: "model_attributes_type",
      },
    ]);
  }
  const issues: ValidationIssue[] = [];
  const out: Record<string, unknown> = {};
  for (const [name, spec] of Object.entries(fields)) {
    if (!(name in body)) {
      if (spec.required) issues.push({ loc: ["body", name], message: "Field required", type: "missing" });
      continue;
    }
    const value = body[name];
    if (value === null && spec.nullable) {
      out[name] = null;
      continue;
    }
    const result = coerce(value, spec.type);
    if (result.issue) issues.push({ loc: ["body", name], ...result.issue });
    else out[name] = result.value;
  }
  if (forbidExtra) {
    for (const name of Object.keys(body)) {
      if (!(name in fields)) {
        issues.push({
          loc: ["body", name],
          message: "Extra inputs are not permitted",
          type: "extra_forbidden",
        });
      }
    }
  }
  if (issues.length > 0) throw new ValidationFailure(issues);
  return out;
}

/**
 * Validates query parameters (all strings on the wire).
 *
 * @throws {ValidationFailure}
 */
export function validateQuery(
  query: URLSearchParams,
  fields: Readonly<Record<string, FieldSpec & { readonly default?: unknown }>>,
): Record<string, unknown> {
  const issues: ValidationIssue[] = [];
  const out: Record<string, unknown> = {};
  for (const [name, spec] of Object.entries(fields)) {
    const raw = query.get(name);
    if (raw === null) {
      if (spec.required) issues.push({ loc: ["query", name], message: "Field required", type: "missing" });
      else out[name] = spec.default;
      continue;
    }
    const result = coerce(raw, spec.type);
    if (result.issue) issues.push({ loc: ["query", name], ...result.issue });
    else out[name] = result.value;
  }
  if (issues.length > 0) throw new ValidationFailure(issues);
  return out;
}
