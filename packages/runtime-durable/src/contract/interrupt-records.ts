import type { JsonObject, JsonValue } from "@openrath/core";
import type { InterruptDecision, InterruptRequest } from "./step-context.js";

/** Kinds of interrupt. */
export type InterruptKind = InterruptRequest["kind"];

/** Kinds of decision. */
export type DecisionKind = InterruptDecision["kind"];

/** Every {@link InterruptKind}. */
export const INTERRUPT_KINDS: readonly InterruptKind[] = Object.freeze(["approval", "input", "review"]);

/** Every {@link DecisionKind}. */
export const DECISION_KINDS: readonly DecisionKind[] = Object.freeze([
  "approve",
  "edit",
  "reject",
  "respond",
]);

/** `pending` waits for a decision; `decided` has one (an operator's, or the declared default on timeout); `expired` timed out without a default. */
export type InterruptStatus = "pending" | "decided" | "expired";

/** A decision as recorded: who took it and how. */
export interface DecisionRecord {
  readonly kind: DecisionKind;
  /** Who decided: the operator's id, or `openrath-system` for a default taken on timeout. */
  readonly actor: string;
  readonly reason?: string;
  readonly payload?: JsonValue;
  /** `operator`, or `timeout` for the declared `onTimeout` default. */
  readonly by: "operator" | "timeout";
}

/**
 * An interrupt as an operator sees it. `request` is exactly what the step asked with — no
 * bookkeeping keys of the runtime in it.
 */
export interface InterruptRecord {
  readonly id: string;
  readonly runId: string;
  readonly tenantId: string;
  /** The step that asked. */
  readonly stepId: string;
  readonly kind: InterruptKind;
  readonly request: JsonValue;
  /** The JSON Schema a decision's payload must satisfy, or `null` for any payload. */
  readonly schema: JsonObject | null;
  /** Whether a default decision is taken on timeout (else the run ends `timed_out`). */
  readonly hasTimeoutDefault: boolean;
  readonly status: InterruptStatus;
  readonly decision: DecisionRecord | null;
  readonly createdAt: number;
  /** When it times out (database clock), or `null` for never. */
  readonly expiresAt: number | null;
  readonly decidedAt: number | null;
}

/** An interrupt as the journal knows it: where it sits in its step visit. */
export interface JournaledInterrupt extends InterruptRecord {
  readonly checkpointSeq: number;
  readonly position: string;
  /** Fingerprint of the request; asking another request at this position is a divergence. */
  readonly fingerprint: string;
}

/** An interrupt to raise (the store parks the run `waiting` in the same transaction). */
export interface InterruptInput {
  readonly checkpointSeq: number;
  readonly stepId: string;
  readonly position: string;
  readonly fingerprint: string;
  readonly kind: InterruptKind;
  readonly request: JsonValue;
  readonly schema: JsonObject | null;
  /** Milliseconds until it times out (database clock), or `null`. */
  readonly timeoutMs: number | null;
  readonly onTimeout: InterruptDecision | null;
  /**
   * The ledger effect of the tool that asked from inside its call (it goes back to `prepared`: the
   * call stopped itself, its outcome is not unknown).
   */
  readonly releaseEffectId?: string;
}

/** A decision an operator takes. */
export interface DecisionInput {
  readonly kind: DecisionKind;
  /** Who decides (required, non-empty). */
  readonly actor: string;
  readonly reason?: string;
  /** Required for `edit` and `respond`; checked against the interrupt's schema whenever given. */
  readonly payload?: JsonValue;
}

/** Filters of an interrupt listing (oldest first, keyset-paginated). */
export interface ListInterruptsQuery {
  readonly tenantId: string;
  readonly runId?: string;
  /** Only interrupts of this project's runs. */
  readonly projectId?: string;
  /** Default `pending`: the inbox. `"all"` for every status. */
  readonly status?: InterruptStatus | "all";
  /** The `nextCursor` of the previous page. */
  readonly cursor?: string;
  /** 1..200, default 50. */
  readonly limit?: number;
}
