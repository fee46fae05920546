import type { JsonObject } from "@openrath/core";
import type { AuditInput } from "./access.js";
import type { RunErrorInfo } from "./run-records.js";

/** Where a queued message stands. */
export type QueuedMessageStatus = "pending" | "submitted" | "failed";

/**
 * A message to a session that had an active run: kept until the session is free, then submitted
 * as the session's next run (the busy-session policy `enqueue`).
 */
export interface QueuedMessage {
  readonly id: string;
  readonly tenantId: string;
  readonly projectId: string | null;
  readonly sessionId: string;
  /** The workflow's name, resolved to its deployed revision when the message is submitted. */
  readonly workflow: string;
  /** The user message appended to the session's newest checkpoint. */
  readonly input: string;
  readonly metadata: JsonObject;
  readonly priority: number;
  readonly status: QueuedMessageStatus;
  /** The run it became, once submitted. */
  readonly runId: string | null;
  /** Why it could not be submitted (`failed`). */
  readonly error: RunErrorInfo | null;
  readonly createdAt: number;
}

/** A message to queue. */
export interface EnqueueInput {
  readonly tenantId: string;
  readonly projectId?: string | null;
  readonly sessionId: string;
  readonly workflow: string;
  readonly input: string;
  readonly metadata?: JsonObject;
  readonly priority?: number;
  /** Written in the same transaction as the message. */
  readonly audit?: AuditInput;
}

/**
 * Messages queued behind a session's active run, version 1 (`store.messageQueue` when
 * `capabilities.messageQueue` is true). A submitter takes the messages whose session has no
 * active run ({@link takeReady}: the oldest pending message of each such session), submits each
 * with the idempotency key `queued:<id>` (so a submitter that dies between the submission and
 * {@link complete} never starts two runs), and completes it.
 *
 * Errors are `DurableError`s: `invalid_argument`.
 */
export interface MessageQueueV1 {
  readonly specVersion: "v1";
  enqueue(input: EnqueueInput): Promise<QueuedMessage>;
  /** The tenant's queued message, or `undefined` (another tenant's included). */
  get(tenantId: string, messageId: string): Promise<QueuedMessage | undefined>;
  /**
   * Up to `limit` pending messages, each the oldest of a session that has no active run, skipping
   * those another submitter is taking (`FOR UPDATE SKIP LOCKED`) and hiding each for `leaseMs`.
   */
  takeReady(limit: number, leaseMs: number): Promise<QueuedMessage[]>;
  /** Marks a taken message submitted (with its run) or failed (with why). */
  complete(
    messageId: string,
    outcome: { readonly runId: string } | { readonly error: RunErrorInfo },
  ): Promise<QueuedMessage | undefined>;
  /** Gives a taken message back at once (its session turned busy again). */
  release(messageId: string): Promise<void>;
}

/** The idempotency key of a queued message's run. */
export function queuedMessageKey(messageId: string): string {
  return `queued:${messageId}`;
}
