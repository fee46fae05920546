import type { ClaimOnSubmitV1, GroupCommitV1, NewSessionSubmitV1 } from "../contract/fast-paths.js";
import type {
  CheckpointWrite,
  Claim,
  ClaimList,
  ClaimRequest,
  EventInput,
  Fence,
  FinishInput,
  RunErrorInfo,
  RunRecord,
  SubmitInput,
  SubmitResult,
  SweepResult,
} from "../contract/run-records.js";
import type { RunStoreV1, SubmitHooks } from "../contract/run-store.js";
import type { Signal, SignalsV1 } from "../contract/signals.js";
import { StoreDelegate } from "../internal/store-delegate.js";

type Publish = (signal: Signal) => void;

const eventOf = (run: RunRecord): Signal => ({ kind: "event", runId: run.id, seq: run.eventSeq });
const workOf = (run: RunRecord): Signal => ({ kind: "work", planHash: run.planHash });

/** The signals of a run a submission created (no `work` for one claimed by its submission). */
const submitted = (run: RunRecord, publish: Publish) => {
  if (run.status !== "running") publish(workOf(run));
  publish(eventOf(run));
};

/**
 * The store seen through signals that the store does not publish itself (Redis, or any
 * {@link SignalsV1} other than `store.signals`): after each write commits, the signals it calls
 * for (`work`, `cancel`, `event` with the run's new sequence) are published through `signals`.
 * A submission's (plain, or by a fast path) go out as soon as the store reports its run committed
 * ({@link SubmitHooks.onCommitted}), while the store still waits for the commit to be durable, so
 * a worker starts the run during that wait; the submitter still gets the run only once it is
 * durable. Everything else (and a submission to a store that does not report it) is published
 * once the call has returned. Either way they go out on the next turn of the event loop, in
 * order, so the caller's (or the store's) next write is not behind them. Publishing is
 * fire-and-forget: a failed publish never undoes or fails the committed write (the store's own
 * commit notifications and the workers' safety sweep cover a lost signal). Every other member is
 * the store's.
 *
 * @example
 * ```ts
 * const published = publishCommits(store, redis); // what createDurableRuntime does for you
 * ```
 */
export function publishCommits(store: RunStoreV1, signals: SignalsV1): RunStoreV1 {
  return new PublishingStore(store, signals);
}

class PublishingStore extends StoreDelegate {
  declare readonly groupCommit?: GroupCommitV1;
  declare readonly newSessionSubmit?: NewSessionSubmitV1;
  declare readonly claimOnSubmit?: ClaimOnSubmitV1;
  // Sent on the next turn of the event loop, in order: the writes to the backend's sockets are
  // not on the caller's path (nor, for a submission, ahead of the store's flush). The store's own
  // notifications, sent with the commit, already woke whoever listens to them.
  private queue: Signal[] = [];
  private readonly publish: Publish = (signal) => {
    if (this.queue.push(signal) === 1) setImmediate(this.flush);
  };
  private readonly flush = () => {
    const batch = this.queue;
    this.queue = [];
    for (const signal of batch) {
      try {
        this.target.publish(signal).catch(() => {});
      } catch {
        // A publish that throws instead of rejecting is lost the same way.
      }
    }
  };

  constructor(
    inner: RunStoreV1,
    private readonly target: SignalsV1,
  ) {
    super(inner);
    const { groupCommit, newSessionSubmit, claimOnSubmit } = inner;
    if (groupCommit) {
      this.groupCommit = {
        specVersion: "v1",
        commitSteps: async (fence, checkpoints) => {
          const run = await groupCommit.commitSteps(fence, checkpoints);
          this.publish(eventOf(run));
          return run;
        },
      };
    }
    if (newSessionSubmit) {
      this.newSessionSubmit = {
        specVersion: "v1",
        submitIfNew: (input, sessionIds, hooks) =>
          this.submission(hooks, (h) => newSessionSubmit.submitIfNew(input, sessionIds, h)),
      };
    }
    if (claimOnSubmit) {
      const { submitIfNew } = claimOnSubmit;
      this.claimOnSubmit = {
        specVersion: "v1",
        submit: (input, claim, hooks) => this.submission(hooks, (h) => claimOnSubmit.submit(input, claim, h)),
        ...(submitIfNew && {
          submitIfNew: (input, sessionIds, claim, hooks) =>
            this.submission(hooks, (h) => submitIfNew.call(claimOnSubmit, input, sessionIds, claim, h)),
        }),
      };
    }
  }

  /**
   * A submission (plain or by a fast path): its signals go out when the store reports the run
   * committed, else once the call has returned; none when it created no run.
   */
  private async submission<R extends SubmitResult | undefined>(
    caller: SubmitHooks | undefined,
    send: (hooks: SubmitHooks) => Promise<R>,
  ): Promise<R> {
    let reported = false;
    const result = await send({
      ...caller,
      onCommitted: (run) => {
        // Queued like the rest: they go out on the next turn of the event loop, after the store
        // has sent its flush and long before that flush returns.
        if (!reported) submitted(run, this.publish);
        reported = true;
        caller?.onCommitted?.(run);
      },
    });
    if (!reported && result?.created) submitted(result.run, this.publish);
    return result;
  }

  override submit(input: SubmitInput, hooks?: SubmitHooks): Promise<SubmitResult> {
    return this.submission(hooks, (h) => this.inner.submit(input, h));
  }
  override async claim(request: ClaimRequest): Promise<ClaimList> {
    const claims = await this.inner.claim(request);
    for (const claim of claims) this.publish(eventOf(claim.run));
    return claims;
  }
  override async reclaim(request: Omit<ClaimRequest, "limit">): Promise<Claim[]> {
    const claims = await this.inner.reclaim(request);
    for (const claim of claims) this.publish(eventOf(claim.run));
    return claims;
  }
  override async commitStep(
    fence: Fence,
    checkpoint: CheckpointWrite,
    expectedVersion?: number,
  ): Promise<RunRecord> {
    return this.ran(await this.inner.commitStep(fence, checkpoint, expectedVersion));
  }
  override async finish(fence: Fence, input: FinishInput): Promise<RunRecord> {
    return this.ran(await this.inner.finish(fence, input));
  }
  override async park(fence: Fence, input: Parameters<RunStoreV1["park"]>[1]): Promise<RunRecord> {
    return this.ran(await this.inner.park(fence, input));
  }
  override async scheduleRetry(
    fence: Fence,
    input: { readonly delayMs: number; readonly error: RunErrorInfo },
  ): Promise<RunRecord> {
    return this.queued(await this.inner.scheduleRetry(fence, input));
  }
  override async release(fence: Fence): Promise<RunRecord> {
    return this.queued(await this.inner.release(fence));
  }
  override async unpark(
    runId: string,
    input: { readonly actor: string; readonly reason: string },
  ): Promise<RunRecord> {
    return this.queued(await this.inner.unpark(runId, input));
  }
  override async cancel(
    runId: string,
    input?: { readonly reason?: string; readonly actor?: string },
  ): Promise<RunRecord> {
    const run = await this.inner.cancel(runId, input);
    this.publish({ kind: "cancel", runId: run.id });
    return this.ran(run);
  }
  override async appendEvent(fence: Fence, event: EventInput): Promise<number> {
    const seq = await this.inner.appendEvent(fence, event);
    this.publish({ kind: "event", runId: fence.runId, seq });
    return seq;
  }
  override async sweep(): Promise<SweepResult> {
    const result = await this.inner.sweep();
    if (result.requeued > 0) this.publish({ kind: "work" });
    return result;
  }

  /** A write that moved the run: its new event sequence. */
  private ran(run: RunRecord): RunRecord {
    this.publish(eventOf(run));
    return run;
  }
  /** A write that put the run back in the queue: work for its plan, and its new event sequence. */
  private queued(run: RunRecord): RunRecord {
    this.publish(workOf(run));
    return this.ran(run);
  }
}
