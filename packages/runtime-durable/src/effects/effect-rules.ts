import type { EffectClass, Tool, ToolOutcome } from "@openrath/core";
import { projectToolResult, toolErrorContent } from "@openrath/core/backend";
import { DurableError } from "../contract/durable-error.js";
import type { EffectResolutionInput, LedgeredEffectClass } from "../contract/effect-records.js";
import { sha256 } from "../internal/canonical.js";
import { isJsonValue } from "../interrupts/interrupt-schema.js";

/** The class a tool declares (a hand-made tool without one is `non_idempotent`). */
export function effectOf(tool: Tool<never>): EffectClass {
  return tool.effect ?? "non_idempotent";
}

/**
 * Whether calls of this class go into the ledger: those that change the world (`idempotent`,
 * `non_idempotent`). A `none` or `read_only` call is always safe to repeat, so the journal alone
 * records it; a ledger row would settle nothing.
 */
export function isLedgered(effect: EffectClass): effect is LedgeredEffectClass {
  return effect === "idempotent" || effect === "non_idempotent";
}

/**
 * Whether an effect whose outcome a crash left unknown may simply be sent again: reads, and
 * idempotent calls that carry their key. Anything else needs a human's review.
 */
export function safeToRepeat(effect: EffectClass, keyed: boolean): boolean {
  return effect === "none" || effect === "read_only" || (effect === "idempotent" && keyed);
}

const MAX_KEY = 256;

/**
 * The idempotency key of a call, or `null` when the tool declares none: for `idempotencyKey: true`
 * a key unique to the call and the same in every attempt (derived from the run and the journal
 * position); for a function, its value for the arguments.
 *
 * @throws {DurableError} `invalid_argument` when the function gives no usable key.
 */
export function idempotencyKeyOf(
  tool: Tool<never>,
  args: unknown,
  call: { readonly runId: string; readonly checkpointSeq: number; readonly position: string },
): string | null {
  const rule = tool.idempotencyKey;
  if (rule === undefined) return null;
  if (rule === true) {
    return `openrath-${sha256(`${call.runId}\u0000${call.checkpointSeq}\u0000${call.position}`).slice(0, 40)}`;
  }
  const key = (rule as (a: unknown) => unknown)(args);
  if (typeof key !== "string" || key === "" || key.length > MAX_KEY) {
    throw new DurableError(
      "invalid_argument",
      `Tool "${tool.name}": its idempotencyKey function must return a non-empty string of at most ${MAX_KEY} characters, got ${JSON.stringify(key)}.`,
      { details: { tool: tool.name } },
    );
  }
  return key;
}

/**
 * Checks an operator's resolution before anything is written.
 *
 * @throws {DurableError} `invalid_argument` naming the problem.
 */
export function checkResolution(resolution: EffectResolutionInput): void {
  const r = (resolution ?? {}) as Partial<EffectResolutionInput> & { result?: unknown; reason?: unknown };
  const problems: string[] = [];
  if (r.kind !== "succeeded" && r.kind !== "failed" && r.kind !== "retry")
    problems.push(`kind ${JSON.stringify(r.kind)} is not one of succeeded, failed, retry`);
  if (typeof r.actor !== "string" || r.actor.trim() === "" || r.actor.length > 200)
    problems.push("actor must be a non-empty string of at most 200 characters");
  if (r.kind === "failed" && (typeof r.reason !== "string" || r.reason.trim() === ""))
    problems.push("a failed resolution needs a reason");
  if (r.reason !== undefined && (typeof r.reason !== "string" || r.reason.length > 4000))
    problems.push("reason must be a string of at most 4000 characters");
  if (r.kind === "succeeded" && !isJsonValue(r.result))
    problems.push("a succeeded resolution needs its result as JSON (what the outside world shows)");
  if (problems.length > 0) {
    throw new DurableError("invalid_argument", `The resolution is not valid: ${problems.join("; ")}.`, {
      details: { problems },
    });
  }
}

/** The tool result an operator's resolution stands for, as it enters the transcript. */
export function resolutionOutcome(resolution: EffectResolutionInput): ToolOutcome | null {
  if (resolution.kind === "succeeded")
    return { content: projectToolResult(resolution.result), isError: false };
  if (resolution.kind === "failed") {
    return {
      content: toolErrorContent(
        "effect_failed",
        `An operator (${resolution.actor}) recorded that this call failed: ${resolution.reason}`,
      ),
      isError: true,
    };
  }
  return null;
}
