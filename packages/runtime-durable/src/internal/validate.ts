import type { JsonObject, JsonValue } from "@openrath/core";
import { DurableError } from "../contract/durable-error.js";

/** Longest tenant id (characters). */
export const MAX_TENANT_ID = 128;
/** Longest idempotency key (characters). */
export const MAX_IDEMPOTENCY_KEY = 256;
/** Longest run id, effect id or interrupt id a caller may pass (characters). */
export const MAX_OBJECT_ID = 128;
/** Largest run metadata, as UTF-8 JSON (bytes): it is stored on the run row and given to every step. */
export const MAX_METADATA_BYTES = 64 * 1024;
/** The last moment PostgreSQL and `Date` both hold: 9999-12-31T23:59:59.999Z. */
const MAX_TIME = 253_402_300_799_999;
const MAX_DEPTH = 64;

// C0 and C1 control characters (NUL included): PostgreSQL text refuses NUL, and none belong in an id.
// biome-ignore lint/suspicious/noControlCharactersInRegex: matching control characters is the point.
const CONTROL = /[\u0000-\u001f\u007f-\u009f]/;

const shown = (value: unknown) =>
  typeof value === "string"
    ? JSON.stringify(value.length > 40 ? `${value.slice(0, 40)}…` : value)
    : typeof value === "bigint"
      ? `${value}n`
      : String(value);

function invalid(name: string, message: string): never {
  throw new DurableError("invalid_argument", `${name} ${message}`, { details: { option: name } });
}

/**
 * Checks an identifier a caller passes (a tenant id, an idempotency key, a run id): a non-empty
 * string of at most `max` characters without control characters.
 *
 * @throws {DurableError} `invalid_argument` naming `name`, before anything is written.
 */
export function checkIdentifier(name: string, value: unknown, max: number): string {
  if (typeof value !== "string" || value === "")
    invalid(name, `must be a non-empty string, got ${shown(value)}.`);
  if (value.length > max)
    invalid(name, `must be at most ${max} characters, got ${value.length} (${shown(value)}).`);
  if (CONTROL.test(value))
    invalid(name, `must not contain control characters (such as NUL), got ${shown(value)}.`);
  return value;
}

/**
 * A time option (`deadline`, `notBefore`) as epoch milliseconds: a valid `Date` or a finite number,
 * no earlier than `now - skewMs` and no later than the year 9999.
 *
 * @throws {DurableError} `invalid_argument` naming `name`.
 */
export function checkTime(name: string, value: unknown, now: number, skewMs: number): number {
  const time = value instanceof Date ? value.getTime() : value;
  if (typeof time !== "number" || !Number.isFinite(time))
    invalid(
      name,
      `must be a valid Date or epoch milliseconds, got ${value instanceof Date ? "an invalid Date" : shown(value)}.`,
    );
  if (time > MAX_TIME) invalid(name, `must be before the year 10000, got ${time}.`);
  if (time < now - skewMs)
    invalid(
      name,
      `lies ${Math.round(now - time)} ms in the past (${new Date(time).toISOString()}); at most ${skewMs} ms of clock skew is allowed (DurableRuntimeOptions.clockSkewMs).`,
    );
  return Math.floor(time);
}

/** Whether `value` is JSON: null, booleans, finite numbers, strings, arrays and plain objects, without cycles. */
export function isJson(value: unknown): value is JsonValue {
  return jsonProblem(value, new Set(), 0) === undefined;
}

function jsonProblem(value: unknown, path: Set<object>, depth: number): string | undefined {
  if (value === null || typeof value === "string" || typeof value === "boolean") return undefined;
  if (typeof value === "number") return Number.isFinite(value) ? undefined : `a non-finite number (${value})`;
  if (typeof value !== "object") return `a ${typeof value}`;
  if (depth >= MAX_DEPTH) return `nesting deeper than ${MAX_DEPTH} levels`;
  if (path.has(value)) return "a cycle";
  const proto = Object.getPrototypeOf(value);
  if (!Array.isArray(value) && proto !== Object.prototype && proto !== null)
    return `an instance of ${proto?.constructor?.name ?? "a class"}`;
  path.add(value);
  try {
    for (const v of Array.isArray(value) ? value : Object.values(value)) {
      // An absent value of an object is what JSON makes of `undefined`; in an array it is not JSON.
      if (v === undefined && !Array.isArray(value)) continue;
      const problem = jsonProblem(v, path, depth + 1);
      if (problem) return problem;
    }
  } finally {
    path.delete(value);
  }
  return undefined;
}

/**
 * Checks caller data kept on a run (`metadata`): a plain JSON object of at most `maxBytes` as
 * UTF-8 JSON.
 *
 * @throws {DurableError} `invalid_argument` naming `name` and what is wrong.
 */
export function checkJsonObject(name: string, value: unknown, maxBytes: number): JsonObject {
  if (typeof value !== "object" || value === null || Array.isArray(value))
    invalid(name, `must be a plain JSON object, got ${Array.isArray(value) ? "an array" : shown(value)}.`);
  const problem = jsonProblem(value, new Set(), 0);
  if (problem) invalid(name, `must be JSON, but it holds ${problem}.`);
  const bytes = Buffer.byteLength(JSON.stringify(value));
  if (bytes > maxBytes)
    invalid(
      name,
      `is ${bytes} bytes as JSON; at most ${maxBytes} are kept on a run (put large data in the session or an artifact).`,
    );
  return value as JsonObject;
}
