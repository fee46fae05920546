import type { JsonValue } from "@openrath/core";
import type { JournaledInterrupt } from "./interrupt-records.js";

/** What a journal entry records: a model call's response, a tool call's outcome, or a journaled function's value. */
export type JournalKind = "model" | "tool" | "call";

/**
 * One completed call of a step visit. Keyed by `(runId, checkpointSeq, position)`: the visit is the
 * checkpoint the step started from (a step that a router visits again gets a new journal), the
 * position is where the call sits in the step (its branch and call order).
 */
export interface JournalEntry {
  readonly runId: string;
  /** The run's checkpoint sequence when the step started: names the step visit. */
  readonly checkpointSeq: number;
  /** Where the call sits, such as `m/<branch>/3` (model call 3 on a branch) or `t/<branch>/3/1`. */
  readonly position: string;
  readonly kind: JournalKind;
  /** Fingerprint of the request; a resumed step sending another request here has diverged. */
  readonly fingerprint: string;
  /** The branch (and call) in words, for divergence messages. */
  readonly label: string;
  /** The recorded answer: a `ProviderResponse`, a `ToolOutcome`, or the function's JSON value. */
  readonly result: JsonValue;
  /** The fencing token of the lease the call was recorded under. */
  readonly fencingToken: number;
  readonly at: number;
  /** The trace and span of the live call, when it was traced (W3C ids, lower-case hex). */
  readonly trace?: JournalTrace;
}

/** The trace and span a journal entry's live call was recorded under. */
export interface JournalTrace {
  readonly traceId: string;
  readonly spanId: string;
}

/** A journal entry to write (the store adds the run, the token and the time). */
export interface JournalEntryInput {
  readonly checkpointSeq: number;
  readonly position: string;
  readonly kind: JournalKind;
  readonly fingerprint: string;
  readonly label: string;
  readonly result: JsonValue;
  /** The trace and span of the live call, when traced. */
  readonly trace?: JournalTrace;
}

/** What a step attempt starts from: the visit's journal and its interrupts. */
export interface StepJournalState {
  /** The visit (the run's checkpoint sequence under the fence). */
  readonly checkpointSeq: number;
  readonly entries: readonly JournalEntry[];
  /** The visit's interrupts, with their positions. */
  readonly interrupts: readonly JournaledInterrupt[];
}

/** A page of a listing and the cursor of the next one (`null` on the last page). */
export interface Page<T> {
  readonly items: readonly T[];
  /** Pass as `cursor` to get the next page; `null` when there is none. */
  readonly nextCursor: string | null;
}
