import type { JsonObject, Session } from "@openrath/core";
import { baseOf, encodeCheckpoint } from "../checkpoint/delta-codec.js";
import type { AuditInput } from "../contract/access.js";
import { DurableError } from "../contract/durable-error.js";
import type {
  CheckpointWrite,
  RunRecord,
  SubmitInput,
  SubmitResult,
  TraceContext,
} from "../contract/run-records.js";
import type { RunStoreV1 } from "../contract/run-store.js";
import type { LocalDispatch } from "../worker/local-dispatch.js";
import { canonicalJson, sha256 } from "./canonical.js";
import { fastPathsOf } from "./fast-paths.js";
import { checkTraceContext } from "./trace-context.js";
import {
  checkIdentifier,
  checkJsonObject,
  checkTime,
  MAX_IDEMPOTENCY_KEY,
  MAX_METADATA_BYTES,
  MAX_TENANT_ID,
} from "./validate.js";

/** Options of `DurableRuntime.submit`. Each is checked before anything is written (`invalid_argument`). */
export interface SubmitOptions {
  /** The run's tenant (default: the runtime's); at most 128 characters, no control characters. */
  readonly tenantId?: string;
  /**
   * Resubmitting with the same key returns the first run (same request) or fails (different one).
   * At most 256 characters, no control characters.
   */
  readonly idempotencyKey?: string;
  /** −100..100, higher first (default 0). */
  readonly priority?: number;
  /**
   * The run times out at this time (a valid `Date` or epoch milliseconds, not in the past by more
   * than `clockSkewMs`, after `notBefore`).
   */
  readonly deadline?: Date | number;
  /** Not started before this time (as `deadline`, not in the past by more than `clockSkewMs`). */
  readonly notBefore?: Date | number;
  /**
   * Caller data kept with the run and shown to steps as `ctx.metadata`: a plain JSON object of at
   * most 64 KiB as JSON ({@link MAX_METADATA_BYTES}).
   */
  readonly metadata?: JsonObject;
  /**
   * A project inside the tenant the run belongs to (at most 128 characters, no control
   * characters): lists filter by it, and a project-scoped API token sees only its project's runs.
   */
  readonly projectId?: string;
  /** An audit record the store writes in the submission's transaction (`capabilities.access`). */
  readonly audit?: AuditInput;
  /**
   * The submitter's W3C trace context (a `traceparent` header value and its `tracestate`), stored
   * with the run so every step attempt, on whichever worker, continues the trace. Not part of the
   * idempotency fingerprint. A runtime with `traceSubmit` passes it there first.
   */
  readonly traceContext?: TraceContext;
}

/** A submission's options as checked, times in epoch milliseconds. */
export interface CheckedSubmit {
  readonly tenantId: string;
  readonly priority: number;
  readonly deadline: number | undefined;
  readonly notBefore: number | undefined;
  readonly traceContext: TraceContext | undefined;
}

/**
 * The submission's options, checked before anything reaches the store; `tenantOf` checks the
 * tenant and defaults it.
 *
 * @throws {DurableError} `invalid_argument`.
 */
export function checkSubmitOptions(
  options: SubmitOptions,
  tenantOf: (options: SubmitOptions) => string,
  clockSkewMs: number,
): CheckedSubmit {
  if (typeof options !== "object" || options === null)
    throw new DurableError("invalid_argument", "submit options must be an object.");
  const tenantId = tenantOf(options);
  if (options.idempotencyKey !== undefined)
    checkIdentifier("idempotencyKey", options.idempotencyKey, MAX_IDEMPOTENCY_KEY);
  const priority = options.priority ?? 0;
  if (!Number.isInteger(priority) || priority < -100 || priority > 100) {
    throw new DurableError(
      "invalid_argument",
      `priority must be an integer from -100 to 100, got ${priority}.`,
      {
        details: { option: "priority" },
      },
    );
  }
  const now = Date.now();
  const time = (name: "deadline" | "notBefore") =>
    options[name] === undefined ? undefined : checkTime(name, options[name], now, clockSkewMs);
  const deadline = time("deadline");
  const notBefore = time("notBefore");
  if (deadline !== undefined && notBefore !== undefined && deadline <= notBefore) {
    throw new DurableError(
      "invalid_argument",
      `deadline (${new Date(deadline).toISOString()}) must be after notBefore (${new Date(notBefore).toISOString()}): the run could never start.`,
      { details: { option: "deadline" } },
    );
  }
  if (options.metadata !== undefined) checkJsonObject("metadata", options.metadata, MAX_METADATA_BYTES);
  if (options.projectId !== undefined) checkIdentifier("projectId", options.projectId, MAX_TENANT_ID);
  const traceContext =
    options.traceContext === undefined ? undefined : checkTraceContext(options.traceContext);
  return { tenantId, priority, deadline, notBefore, traceContext };
}

/**
 * What a submitted session asks, for the idempotency fingerprint: its chunks without the ids,
 * times and session ids a new `Session` gets each time it is built, so a client that rebuilds the
 * same conversation and resubmits it under its key gets the first run back.
 */
function requestContent(session: Session): unknown[] {
  return session.toJSON().chunks.map(({ id: _id, createdAt: _at, sessionId: _session, ...rest }) => rest);
}

/** One submission, its options checked and its plan resolved. */
export interface Submission {
  readonly planHash: string;
  /** The plan's entry step: checkpoint 0's next step. */
  readonly entry: string;
  readonly session: Session;
  readonly options: SubmitOptions;
  readonly checked: CheckedSubmit;
}

/**
 * Submits a run: encodes the session as checkpoint 0 against its newest checkpoint in the store
 * and picks the store's path for it (plain, new session, claimed for a worker of this runtime).
 */
export async function submitRun(
  store: RunStoreV1,
  dispatch: LocalDispatch,
  { planHash, entry, session, options, checked }: Submission,
): Promise<RunRecord> {
  const { tenantId, priority, deadline, notBefore, traceContext } = checked;
  const sessionIds = [session.id, ...session.lineage.parents.map((p) => p.id)];
  const fields = { sequence: 0, stepId: null, nextStep: entry };
  // Only compared when the key is reused: without a key, no fingerprint (and no serialization of the session).
  const fingerprint =
    options.idempotencyKey === undefined
      ? ""
      : sha256(
          canonicalJson({
            planHash,
            tenantId,
            priority,
            deadline: deadline ?? null,
            metadata: options.metadata ?? {},
            session: sha256(JSON.stringify(requestContent(session))),
          }),
        );
  const input = (checkpoint: CheckpointWrite): SubmitInput => ({
    tenantId,
    planHash,
    checkpoint,
    priority,
    fingerprint,
    ...(options.idempotencyKey === undefined ? {} : { idempotencyKey: options.idempotencyKey }),
    ...(deadline === undefined ? {} : { deadline }),
    ...(notBefore === undefined ? {} : { notBefore }),
    ...(options.metadata === undefined ? {} : { metadata: options.metadata }),
    ...(options.projectId === undefined ? {} : { projectId: options.projectId }),
    ...(options.audit === undefined ? {} : { audit: options.audit }),
    ...(traceContext === undefined ? {} : { traceContext }),
  });
  const fast = fastPathsOf(store);
  // A worker of this runtime with a free slot for a due run: the submission claims the run for it.
  // Only on a store for several processes: on an embedded one a claim is cheap, and one claim
  // takes the runs queued meanwhile (ADR 0018 decision 4).
  const reservation =
    fast.claimOnSubmit &&
    store.capabilities.multiProcess &&
    (notBefore === undefined || notBefore <= Date.now())
      ? dispatch.reserve(planHash)
      : undefined;
  const claim = reservation?.claim;
  let adopted = false;
  const settle = dispatch.submitting(tenantId, session.id);
  const startedAt = performance.now();
  try {
    // The plain path encodes the session against its head in the store and submits. A session this
    // runtime has not seen checkpointed is tried as a new one first (one round trip) where the
    // store has that fast path; it refuses if it has a head after all, and the plain path follows.
    let result: SubmitResult | undefined;
    let encoded = encodeCheckpoint(session, null, fields);
    // The run claimed for the worker starts as soon as its submission has committed, with the
    // session in memory (on a server, while the submission still waits for its WAL flush).
    const adopt = (run: RunRecord) => {
      adopted ||= reservation?.adopt(run, session, encoded.next) === true;
    };
    const hooks = reservation ? { onCommitted: adopt } : undefined;
    const submitNew = (checkpoint: CheckpointWrite) =>
      claim
        ? fast.claimOnSubmit?.submitIfNew?.(input(checkpoint), sessionIds, claim, hooks)
        : fast.newSessionSubmit?.submitIfNew(input(checkpoint), sessionIds, hooks);
    const submitEncoded = (checkpoint: CheckpointWrite) =>
      claim && fast.claimOnSubmit
        ? fast.claimOnSubmit.submit(input(checkpoint), claim, hooks)
        : store.submit(input(checkpoint), hooks);
    if (fast.newSessionSubmit && !dispatch.hasCheckpoints(session.id))
      result = await submitNew(encoded.write);
    if (result === undefined) {
      const head = await store.findSessionHead(tenantId, sessionIds);
      encoded = encodeCheckpoint(session, head ? baseOf(head) : null, fields);
      result = await submitEncoded(encoded.write);
    }
    dispatch.checkpointedSession(session.id);
    const { run, created } = result;
    if (created) {
      dispatch.submitted(run.id, startedAt);
      // A store that claimed without reporting the commit.
      adopt(run);
    }
    settle(
      created && !adopted
        ? { runId: run.id, session, base: encoded.next(run.checkpointId), checkpointId: run.checkpointId }
        : undefined,
    );
    return run;
  } catch (error) {
    settle();
    throw error;
  } finally {
    reservation?.release();
  }
}
