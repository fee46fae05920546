import type { EffectClass, JsonValue, ToolOutcome } from "@openrath/core";

/** The effect classes the ledger records (`none` is never ledgered: it touches nothing outside). */
export type LedgeredEffectClass = Exclude<EffectClass, "none">;

/**
 * Where an effect is in its life:
 *
 * - `prepared`: known and not (or no longer) in flight: a safe effect a crash left unfinished, or
 *   one an operator approved to retry. The next dispatch sends it.
 * - `dispatched`: sent under the fencing token on the record. Found so under a newer token, its
 *   worker's lease was lost mid-call and the outcome is unknown (ambiguous).
 * - `succeeded` / `failed`: the outcome is known (recorded by the worker, or stated by an operator).
 * - `needs_review`: ambiguous and not safe to repeat; the run is parked until an operator resolves it.
 */
export type EffectStatus = "prepared" | "dispatched" | "succeeded" | "failed" | "needs_review";

/** Every {@link EffectStatus}, in life order. */
export const EFFECT_STATUSES: readonly EffectStatus[] = Object.freeze([
  "prepared",
  "dispatched",
  "succeeded",
  "failed",
  "needs_review",
]);

/** An operator's resolution of an effect under review. */
export type EffectResolutionInput =
  | {
      readonly kind: "succeeded";
      /** What the outside world shows the call did: becomes the tool's result. */
      readonly result: JsonValue;
      readonly actor: string;
      readonly reason?: string;
    }
  | {
      readonly kind: "failed";
      /** Why: goes back to the model in the tool's error result. */
      readonly reason: string;
      readonly actor: string;
    }
  | {
      /** The effect did not happen (or repeating it is fine): dispatch it again. */
      readonly kind: "retry";
      readonly actor: string;
      readonly reason?: string;
    };

/** A resolution as recorded on the effect. */
export type EffectResolution = EffectResolutionInput & {
  /** When it was recorded (database clock, epoch ms). */
  readonly at: number;
};

/** One effect of a run, as the ledger holds it. */
export interface EffectRecord {
  readonly id: string;
  readonly runId: string;
  readonly tenantId: string;
  /** The step visit that dispatched it first. */
  readonly checkpointSeq: number;
  readonly stepId: string;
  /** The tool call's journal position. */
  readonly position: string;
  /** The tool's name. */
  readonly tool: string;
  /** The model's id of the call. */
  readonly callId: string;
  readonly effect: LedgeredEffectClass;
  /** The key it was dispatched with, or `null` (unkeyed). Unique within the run. */
  readonly idempotencyKey: string | null;
  /** SHA-256 of the canonical JSON of the arguments. */
  readonly argumentsDigest: string;
  /** The arguments, for the operator reviewing it. */
  readonly arguments: JsonValue;
  readonly status: EffectStatus;
  /** The fencing token of its latest dispatch. */
  readonly fencingToken: number;
  /** The worker of its latest dispatch. */
  readonly workerId: string;
  /** How many times it was sent. */
  readonly dispatches: number;
  /** The outcome once known (what entered the transcript), else `null`. */
  readonly outcome: ToolOutcome | null;
  /** The operator's resolution, if one was recorded. */
  readonly resolution: EffectResolution | null;
  readonly createdAt: number;
  readonly updatedAt: number;
}

/** An effect about to be dispatched. */
export interface EffectInput {
  readonly checkpointSeq: number;
  readonly stepId: string;
  readonly position: string;
  readonly tool: string;
  readonly callId: string;
  readonly effect: LedgeredEffectClass;
  readonly idempotencyKey: string | null;
  readonly argumentsDigest: string;
  readonly arguments: JsonValue;
}

/** Filters of an effect listing (newest last, keyset-paginated). */
export interface ListEffectsQuery {
  readonly tenantId: string;
  readonly runId?: string;
  /** Only effects of this project's runs. */
  readonly projectId?: string;
  /** Default `needs_review`: the review inbox. */
  readonly status?: EffectStatus | readonly EffectStatus[];
  /** The `nextCursor` of the previous page. */
  readonly cursor?: string;
  /** 1..200, default 50. */
  readonly limit?: number;
}
