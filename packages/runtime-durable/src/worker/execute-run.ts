import { type CallPolicy, type JsonValue, OpenRathError, Session } from "@openrath/core";
import { baseOf, type CheckpointBase, encodeCheckpoint, restoreSession } from "../checkpoint/delta-codec.js";
import { DurableError } from "../contract/durable-error.js";
import {
  type Claim,
  type Fence,
  type FinishInput,
  PREVIOUS_CHECKPOINT,
  type RunErrorInfo,
  type RunRecord,
} from "../contract/run-records.js";
import type { RunStoreV1 } from "../contract/run-store.js";
import type { SignalsV1 } from "../contract/signals.js";
import type { StepContext, StepLogger, StepMiddleware } from "../contract/step-context.js";
import { type CompiledPlan, type PlanNode, retryDelayMs } from "../definition/compile.js";
import { invalidSuccessor, notSession } from "../definition/run-in-memory.js";
import { fastPathsOf } from "../internal/fast-paths.js";
import { CommitPipeline } from "./commit-pipeline.js";
import type { FreshVisits } from "./fresh-visits.js";
import { runIsolated } from "./isolated-executor.js";
import type { LocalDispatch } from "./local-dispatch.js";

/** What executing one claimed run needs from its worker. */
export interface ExecutionEnv {
  readonly store: RunStoreV1;
  readonly plan: CompiledPlan;
  readonly middleware: readonly StepMiddleware[];
  /** The worker's call policy, put on every step's context. */
  readonly policy?: CallPolicy;
  readonly log: (level: keyof StepLogger, message: string, data?: Record<string, unknown>) => void;
  /** Retries a worker write while the store is unreachable and the lease may still be ours. */
  readonly write: <T>(fence: Fence, work: () => Promise<T>) => Promise<T>;
  /** Where `ctx.emitLive` publishes live events (default: nowhere). */
  readonly signals?: SignalsV1;
  /** The worker's runtime: a run it submitted starts its first step from memory, not a read. */
  readonly dispatch?: LocalDispatch;
  /** Step visits known to have an empty journal (opened without a read). */
  readonly fresh?: FreshVisits;
  /**
   * The lease the claim asked for: with it, the database clock is read off the claim's expiry
   * (deadlines are checked before every step without a round trip). Without it, `store.now()`.
   */
  readonly leaseMs?: number;
  /** Told of every run this worker ended, with its final record (for waiters in this process). */
  readonly ended?: (run: RunRecord) => void;
  /**
   * Whether the worker is stopping: the run then hands its lease back to the queue after the step
   * in flight commits, instead of starting the next step.
   */
  readonly stopping?: () => boolean;
}

/** The reason a run's controller was aborted with, telling the executor how to end. */
export type StopReason = DurableError;

function errorInfo(error: unknown, stepId: string): RunErrorInfo {
  if (OpenRathError.isInstance(error)) {
    const retryable = (error.details as { retryable?: unknown }).retryable;
    return {
      code: error.code,
      message: error.message,
      stepId,
      ...(typeof retryable === "boolean" ? { retryable } : {}),
    };
  }
  const message = error instanceof Error ? `${error.name}: ${error.message}` : String(error);
  return { code: "step_failed", message, stepId };
}

function isStale(error: unknown): boolean {
  return (
    OpenRathError.isInstance(error, "stale_fence") || OpenRathError.isInstance(error, "version_conflict")
  );
}

/**
 * Runs a claimed run from its last committed checkpoint until it ends, parks, is retried later,
 * or the lease is lost: each step's result is committed as the next checkpoint (fenced), so a
 * crash resumes at the step after the last commit, on any worker.
 */
export async function executeRun(
  env: ExecutionEnv,
  claim: Claim,
  controller: AbortController,
): Promise<void> {
  const { store, plan } = env;
  const fence = claim.fence;
  let run: RunRecord = claim.run;
  // The run's last stored sequence as this worker knows it: live events are tagged with it so a
  // follower yields them after the stored events they follow.
  const seen = { seq: claim.run.eventSeq };
  // Every end goes through here, so this process's waiters learn the final record without a read.
  const finish = async (input: FinishInput) => {
    const ended = await store.finish(fence, input);
    env.ended?.(ended);
    for (const m of env.middleware) {
      try {
        m.ended?.(ended);
      } catch {
        // A middleware's report of the end must not undo the end.
      }
    }
    return ended;
  };
  // The step commits still in flight: each step's checkpoint is committed behind the next step,
  // one by one (`commitStep`) or, where the store has the fast path, in batches.
  const { groupCommit } = fastPathsOf(store);
  const steps = new CommitPipeline(
    (writes) =>
      env.write(fence, () =>
        writes.length === 1 || !groupCommit
          ? store.commitStep(fence, writes[0]!)
          : groupCommit.commitSteps(fence, writes),
      ),
    (committed) => {
      run = committed;
      seen.seq = Math.max(seen.seq, committed.eventSeq);
    },
    run.checkpointId,
    groupCommit !== undefined,
    // A refused commit means the lease is gone: the step running ahead of it stops now, as it
    // would at the next heartbeat.
    (error) => {
      if (isStale(error) && !controller.signal.aborted)
        controller.abort(
          new DurableError(
            "lease_lost",
            `Run ${run.id}: a step commit was refused (${(error as Error).message}).`,
            {
              details: { runId: run.id },
            },
          ),
        );
    },
  );
  /** A write that ends or requeues the run: after the step commits in flight, dropped when stale. */
  const ending = async (work: () => Promise<unknown>): Promise<void> => {
    try {
      await steps.settled();
      await env.write(fence, work);
    } catch (e) {
      if (!isStale(e)) throw e;
    }
  };
  const failRun = (error: RunErrorInfo) => ending(() => finish({ status: "failed", error }));
  // Set when the run is to go back to the queue for another worker (the worker is stopping).
  let handOver = false;
  const stoppedByWorker = () =>
    controller.signal.aborted && OpenRathError.isInstance(controller.signal.reason, "worker_stopping");

  let session: Session;
  let base: CheckpointBase;
  try {
    const handed = await env.dispatch?.takeSession(run);
    if (handed) {
      ({ session, base } = handed);
    } else {
      const brought = claim.checkpoint?.sequence === run.checkpointSeq ? claim.checkpoint : undefined;
      const checkpoint = brought ?? (await store.loadCheckpoint(run.id, run.checkpointSeq));
      if (!checkpoint)
        throw new DurableError("corrupt_checkpoint", `Run ${run.id} has no checkpoint to resume from.`);
      session = restoreSession(checkpoint);
      base = baseOf(checkpoint);
    }
  } catch (error) {
    if (!OpenRathError.isInstance(error, "corrupt_checkpoint")) throw error;
    env.log("error", "checkpoint cannot be restored; failing the run", {
      runId: run.id,
      error: (error as Error).message,
    });
    await failRun({ code: "corrupt_checkpoint", message: (error as Error).message });
    return;
  }

  // The database clock as of the claim (its expiry is the database's now + the lease), followed
  // on the local clock: off by at most the claim's round trip.
  const skew = env.leaseMs === undefined ? undefined : claim.leaseExpiresAt - env.leaseMs - Date.now();
  const databaseNow = async () => (skew === undefined ? store.now() : Date.now() + skew);

  let stepId = run.nextStep;
  let attempt = run.attempt;
  let sequence = run.checkpointSeq;
  // The first lease a run ever had: nothing can have been journaled for it yet. A store whose tokens
  // do not count from 1 (store-postgres issues clock-based ones) shows it by the version: the claim
  // was the first change of the run's row (it starts at 1).
  if ((fence.token === 1 || run.version === 2) && sequence === 0) env.fresh?.mark(fence, 0);
  try {
    while (stepId !== null) {
      if (controller.signal.aborted) return;
      if (env.stopping?.()) {
        handOver = true;
        return;
      }
      if (run.deadline !== null && (await databaseNow()) >= run.deadline) {
        await ending(() =>
          finish({
            status: "timed_out",
            error: { code: "deadline_exceeded", message: "The run passed its deadline.", stepId: stepId! },
          }),
        );
        return;
      }
      const node: PlanNode | undefined = plan.nodes.get(stepId);
      if (!node) {
        await failRun({
          code: "corrupt_checkpoint",
          message: `The checkpoint names step "${stepId}", which plan ${plan.hash} does not have.`,
          stepId,
        });
        return;
      }
      const signals = [controller.signal];
      if (run.deadline !== null) signals.push(AbortSignal.timeout(Math.max(1, run.deadline - Date.now())));
      if (node.kind === "step" && node.timeoutMs !== null && !node.isolated)
        signals.push(AbortSignal.timeout(node.timeoutMs));
      const signal = signals.length === 1 ? controller.signal : AbortSignal.any(signals);
      const context = stepContext(env, run, fence, node.id, attempt, signal, seen, steps, session.id);

      let next: string | null;
      let out: Session = session;
      try {
        const invoke = async (ctx: StepContext): Promise<unknown> => {
          if (node.kind === "router") return node.handler(session, ctx);
          if (node.isolated) {
            return runIsolated(
              node.isolated,
              session.toJSON(),
              {
                runId: run.id,
                stepId: node.id,
                attempt,
                tenantId: run.tenantId,
                deadline: run.deadline,
                metadata: run.metadata,
              },
              node.timeoutMs!,
              ctx.signal,
            );
          }
          return node.handler(session, ctx);
        };
        let call = invoke;
        for (const m of [...env.middleware].reverse()) {
          const inner = call;
          call = (ctx) => m.around(ctx, inner);
        }
        const result = await call(context);
        if (controller.signal.aborted) return;
        if (node.kind === "router") {
          if (typeof result !== "string" || !node.successors.includes(result))
            throw invalidSuccessor(plan, node.id, result, node.successors);
          next = result;
        } else {
          if (node.isolated) {
            try {
              out = Session.fromJSON(result as never);
            } catch {
              throw notSession(plan, node.id, result);
            }
          } else {
            if (!(result instanceof Session)) throw notSession(plan, node.id, result);
            out = result;
          }
          next = node.next;
        }
      } catch (error) {
        if (controller.signal.aborted) return;
        // The step parked the run (an interrupt, an effect under review) or lost its lease: nothing to write.
        if (OpenRathError.isInstance(error, "run_parked")) {
          env.log("info", "run parked", { runId: run.id, stepId: node.id, reason: (error as Error).message });
          return;
        }
        if (OpenRathError.isInstance(error, "stale_fence")) return;
        const info = errorInfo(error, node.id);
        const timedOutByDeadline = run.deadline !== null && Date.now() >= run.deadline;
        if (timedOutByDeadline) {
          await ending(() =>
            finish({
              status: "timed_out",
              error: { code: "deadline_exceeded", message: "The run passed its deadline.", stepId: node.id },
            }),
          );
          return;
        }
        const permanent =
          info.code === "step_not_session" ||
          info.code === "router_invalid_successor" ||
          info.retryable === false;
        const maxAttempts = node.kind === "step" ? node.retry.maxAttempts : 1;
        env.log("warn", "step failed", {
          runId: run.id,
          stepId: node.id,
          attempt,
          code: info.code,
          message: info.message,
        });
        await ending(async () => {
          if (!permanent && attempt < maxAttempts && node.kind === "step") {
            await store.scheduleRetry(fence, { delayMs: retryDelayMs(node.retry, attempt), error: info });
          } else {
            await finish({
              status: info.code === "step_timeout" ? "timed_out" : "failed",
              error: info,
            });
          }
        });
        return;
      }

      const encoded = encodeCheckpoint(out, base, {
        sequence: sequence + 1,
        stepId: node.id,
        nextStep: next,
      });
      try {
        if (next === null) {
          await steps.settled();
          const write = steps.resolve(encoded.write);
          run = await env.write(fence, () => finish({ status: "succeeded", checkpoint: write }));
          return;
        }
        // The next visit starts empty: this commit drops the journal of earlier visits, and only a
        // lease that committed this checkpoint first could have journaled it (then this commit fails).
        env.fresh?.mark(fence, sequence + 1);
        await steps.add(encoded.write);
      } catch (error) {
        if (isStale(error)) {
          env.log("info", "lease lost before commit; another worker owns the run", {
            runId: run.id,
            stepId: node.id,
          });
          return;
        }
        throw error;
      }
      base = encoded.next(PREVIOUS_CHECKPOINT);
      session = out;
      sequence += 1;
      stepId = next;
      attempt = 1;
    }
  } finally {
    // Nothing of this run is left in flight when the worker moves on.
    await steps.settled().catch(() => {});
    if (handOver || stoppedByWorker()) await handBack(env, fence, sequence, stepId);
  }
}

/**
 * Gives the run's lease back to the queue (its committed steps stay; the next worker resumes at
 * the step after the last commit): a stopping worker's hand-over. A stale fence means the run is
 * no longer this worker's, and there is nothing to give back.
 */
async function handBack(env: ExecutionEnv, fence: Fence, sequence: number, stepId: string | null) {
  try {
    await env.write(fence, () => env.store.release(fence));
    env.log("info", "handed the run back to the queue", {
      runId: fence.runId,
      checkpointSeq: sequence,
      nextStep: stepId,
    });
  } catch (error) {
    if (!isStale(error))
      env.log("warn", "could not hand the run back; it is taken over when its lease expires", {
        runId: fence.runId,
        error: (error as Error).message,
      });
  }
}

function stepContext(
  env: ExecutionEnv,
  run: RunRecord,
  fence: Fence,
  stepId: string,
  attempt: number,
  signal: AbortSignal,
  seen: { seq: number },
  commits: CommitPipeline,
  sessionId: string,
): StepContext {
  // The trace id of the run's W3C traceparent (`00-<trace id>-<span id>-<flags>`), so log lines join the trace.
  const traceId = run.traceContext?.traceparent.split("-")[1];
  const fields = { runId: run.id, stepId, attempt, ...(traceId ? { traceId } : {}) };
  const logger: StepLogger = {
    debug: (m, d) => env.log("debug", m, { ...fields, ...d }),
    info: (m, d) => env.log("info", m, { ...fields, ...d }),
    warn: (m, d) => env.log("warn", m, { ...fields, ...d }),
    error: (m, d) => env.log("error", m, { ...fields, ...d }),
  };
  return {
    signal,
    runId: run.id,
    workflow: run.workflow,
    stepId,
    attempt,
    tenantId: run.tenantId,
    workerId: fence.workerId,
    deadline: run.deadline,
    metadata: run.metadata as Record<string, JsonValue>,
    logger,
    fence,
    ...(env.policy ? { policy: env.policy } : {}),
    ...(run.traceContext ? { traceContext: run.traceContext } : {}),
    sessionId,
    submittedAt: run.createdAt,
    checkpointed: () => commits.settled(),
    emit: async (type, data) => {
      // Events follow the checkpoints of the steps before, in sequence order.
      await commits.settled();
      const seq = await env.write(fence, () =>
        env.store.appendEvent(fence, { type, ...(data === undefined ? {} : { data }) }),
      );
      seen.seq = Math.max(seen.seq, seq);
    },
    emitLive: (type, data) => {
      if (!env.signals || signal.aborted) return;
      const live = data === undefined ? { type } : { type, data };
      env.signals.publish({ kind: "event", runId: run.id, seq: seen.seq, live }).catch(() => {});
    },
    interrupt: async () => {
      throw new DurableError(
        "not_supported",
        "Interrupts need the journaled durable runtime; this runtime does not provide them yet.",
        {
          details: { runId: run.id, stepId },
        },
      );
    },
    extensions: {},
  };
}
