import type { JsonObject, JsonValue, StandardSchemaLike } from "@openrath/core";
import { validateJsonSchema } from "@openrath/core/backend";
import { DurableError } from "../contract/durable-error.js";
import { DECISION_KINDS, type DecisionInput, INTERRUPT_KINDS } from "../contract/interrupt-records.js";
import type { InterruptDecision, InterruptRequest } from "../contract/step-context.js";
import { isJson } from "../internal/validate.js";

/** Longest interrupt timeout: about 24 days, what a timer can hold. */
export const MAX_INTERRUPT_TIMEOUT_MS = 2_147_483_647;
const MAX_ACTOR = 200;
const MAX_REASON = 4000;

function isStandard(value: unknown): value is StandardSchemaLike {
  return typeof value === "object" && value !== null && "~standard" in value;
}

/**
 * The JSON Schema stored with an interrupt (operators' decisions are checked against it in any
 * process): a JSON Schema object as given, or a Standard Schema's JSON Schema (zod 4.2+).
 *
 * @throws {DurableError} `invalid_argument` for a schema that is neither.
 */
export function storedSchema(schema: unknown): JsonObject | null {
  if (schema === undefined || schema === null) return null;
  if (isStandard(schema)) {
    const converter = schema["~standard"].jsonSchema;
    if (!converter) {
      throw new DurableError(
        "invalid_argument",
        `An interrupt's ${schema["~standard"].vendor} schema cannot produce JSON Schema (no Standard JSON Schema support), which operators' decisions are checked against. Upgrade the library (zod >= 4.2) or pass a JSON Schema object.`,
      );
    }
    const { $schema: _ignored, ...rest } = converter.input({ target: "draft-2020-12" });
    return rest as JsonObject;
  }
  if (typeof schema === "object" && !Array.isArray(schema) && isJson(schema)) return schema as JsonObject;
  throw new DurableError(
    "invalid_argument",
    "An interrupt's schema must be a Standard Schema (zod 4 works) or a JSON Schema object.",
  );
}

/**
 * Checks a decision, before anything is written: a known kind, a non-empty actor, a reason that is
 * a string, a JSON payload (required for `edit` and `respond`) that satisfies `schema`.
 *
 * @throws {DurableError} `invalid_decision` naming every problem.
 */
export function checkDecision(decision: DecisionInput, schema: JsonObject | null): void {
  const problems: string[] = [];
  const d = (decision ?? {}) as Partial<DecisionInput>;
  if (!DECISION_KINDS.includes(d.kind as never))
    problems.push(`kind ${JSON.stringify(d.kind)} is not one of ${DECISION_KINDS.join(", ")}`);
  if (typeof d.actor !== "string" || d.actor.trim() === "" || d.actor.length > MAX_ACTOR)
    problems.push(`actor must be a non-empty string of at most ${MAX_ACTOR} characters`);
  if (d.reason !== undefined && (typeof d.reason !== "string" || d.reason.length > MAX_REASON))
    problems.push(`reason must be a string of at most ${MAX_REASON} characters`);
  if (d.payload === undefined) {
    if (d.kind === "edit" || d.kind === "respond") problems.push(`a "${d.kind}" decision needs a payload`);
  } else if (!isJson(d.payload)) problems.push("payload must be JSON");
  else if (schema) {
    for (const problem of validateJsonSchema(schema, d.payload)) problems.push(`payload ${problem}`);
  }
  if (problems.length > 0) {
    throw new DurableError("invalid_decision", `The decision is not valid: ${problems.join("; ")}.`, {
      details: { problems },
    });
  }
}

/** A checked interrupt request: its stored schema and JSON parts. */
export interface CheckedRequest {
  readonly kind: InterruptRequest["kind"];
  readonly request: JsonValue;
  readonly schema: JsonObject | null;
  readonly timeoutMs: number | null;
  readonly onTimeout: InterruptDecision | null;
}

/**
 * Checks what a step asks `ctx.interrupt` with: kind, a JSON request, a usable schema, a positive
 * timeout and a default decision that would itself be accepted.
 *
 * @throws {DurableError} `invalid_argument` naming the problem; nothing is written.
 */
export function checkRequest(input: InterruptRequest): CheckedRequest {
  const r = (input ?? {}) as Partial<InterruptRequest>;
  if (!INTERRUPT_KINDS.includes(r.kind as never)) {
    throw new DurableError(
      "invalid_argument",
      `An interrupt's kind must be one of ${INTERRUPT_KINDS.join(", ")}, got ${JSON.stringify(r.kind)}.`,
    );
  }
  if (!isJson(r.request)) {
    throw new DurableError(
      "invalid_argument",
      "An interrupt's request must be JSON (what the operator is shown).",
    );
  }
  const schema = storedSchema(r.schema);
  let timeoutMs: number | null = null;
  if (r.timeoutMs !== undefined) {
    if (!Number.isInteger(r.timeoutMs) || r.timeoutMs < 1 || r.timeoutMs > MAX_INTERRUPT_TIMEOUT_MS) {
      throw new DurableError(
        "invalid_argument",
        `An interrupt's timeoutMs must be an integer from 1 to ${MAX_INTERRUPT_TIMEOUT_MS}, got ${r.timeoutMs}.`,
      );
    }
    timeoutMs = r.timeoutMs;
  }
  let onTimeout: InterruptDecision | null = null;
  if (r.onTimeout !== undefined) {
    if (timeoutMs === null)
      throw new DurableError("invalid_argument", "An interrupt's onTimeout needs a timeoutMs.");
    try {
      checkDecision({ actor: "openrath-system", ...r.onTimeout } as DecisionInput, schema);
    } catch (error) {
      throw new DurableError(
        "invalid_argument",
        `An interrupt's onTimeout is not a valid decision: ${(error as Error).message}`,
        { cause: error },
      );
    }
    onTimeout = r.onTimeout;
  }
  return { kind: r.kind!, request: r.request as JsonValue, schema, timeoutMs, onTimeout };
}

/**
 * The decision as the step receives it: for a Standard Schema, the payload its validation gives
 * (transforms applied), checked again in the step's own process.
 *
 * @throws {DurableError} `invalid_decision` when the live schema refuses the stored payload.
 */
export async function deliveredPayload(schema: unknown, payload: JsonValue | undefined): Promise<unknown> {
  if (payload === undefined || !isStandard(schema)) return payload;
  const result = await schema["~standard"].validate(payload);
  if (result.issues === undefined) return result.value;
  throw new DurableError(
    "invalid_decision",
    `The decision's payload does not satisfy the step's schema: ${result.issues.map((i) => i.message).join("; ")}.`,
  );
}

/** Whether `value` is JSON the store can hold. */
export const isJsonValue = isJson;
