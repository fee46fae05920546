import type { Claim, RunRecord, SubmitResult } from "../contract/run-records.js";
import type { RunStoreV1, SubmitHooks } from "../contract/run-store.js";
import type { Signal, SignalsV1 } from "../contract/signals.js";

type Publish = (signal: Signal) => void;

const eventOf = (run: RunRecord): Signal => ({ kind: "event", runId: run.id, seq: run.eventSeq });
const workOf = (run: RunRecord): Signal => ({ kind: "work", planHash: run.planHash });

/** The signals of a run a submission created (no `work` for one claimed by its submission). */
const submitted = (run: RunRecord, publish: Publish) => {
  if (run.status !== "running") publish(workOf(run));
  publish(eventOf(run));
};

/**
 * For each plain write of the store other than `submit`, the signals its committed result calls
 * for. (Submissions and the fast paths are wrapped one by one in {@link publishCommits}.)
 */
const AFTER_COMMIT: Partial<
  Record<keyof RunStoreV1, (result: never, args: readonly never[], publish: Publish) => void>
> = {
  claim: (claims: Claim[], _args, publish) => {
    for (const claim of claims) publish(eventOf(claim.run));
  },
  reclaim: (claims: Claim[], _args, publish) => {
    for (const claim of claims) publish(eventOf(claim.run));
  },
  commitStep: (run: RunRecord, _args, publish) => publish(eventOf(run)),
  finish: (run: RunRecord, _args, publish) => publish(eventOf(run)),
  park: (run: RunRecord, _args, publish) => publish(eventOf(run)),
  scheduleRetry: (run: RunRecord, _args, publish) => {
    publish(workOf(run));
    publish(eventOf(run));
  },
  release: (run: RunRecord, _args, publish) => {
    publish(workOf(run));
    publish(eventOf(run));
  },
  unpark: (run: RunRecord, _args, publish) => {
    publish(workOf(run));
    publish(eventOf(run));
  },
  cancel: (run: RunRecord, _args, publish) => {
    publish({ kind: "cancel", runId: run.id });
    publish(eventOf(run));
  },
  appendEvent: (seq: number, args: readonly { runId: string }[], publish) =>
    publish({ kind: "event", runId: args[0]!.runId, seq }),
  sweep: (result: { requeued: number }, _args, publish) => {
    if (result.requeued > 0) publish({ kind: "work" });
  },
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
 * fire-and-forget: a
 * failed publish never undoes or fails the committed write (the store's own commit notifications
 * and the workers' safety sweep cover a lost signal). Every other member, including ones added by
 * later store versions, passes through unchanged.
 *
 * @example
 * ```ts
 * const published = publishCommits(store, redis); // what createDurableRuntime does for you
 * ```
 */
export function publishCommits(store: RunStoreV1, signals: SignalsV1): RunStoreV1 {
  const send: Publish = (signal) => {
    try {
      signals.publish(signal).catch(() => {});
    } catch {
      // A publish that throws instead of rejecting is lost the same way.
    }
  };
  // Sent on the next turn of the event loop, in order: the writes to the backend's sockets are
  // not on the caller's path (nor, for a submission, ahead of the store's flush). The store's own
  // notifications, sent with the commit, already woke whoever listens to them.
  let queue: Signal[] = [];
  const flush = () => {
    const batch = queue;
    queue = [];
    for (const signal of batch) send(signal);
  };
  const publish: Publish = (signal) => {
    if (queue.push(signal) === 1) setImmediate(flush);
  };
  /**
   * A submission (plain or by a fast path): its signals go out when the store reports the run
   * committed, else once the call has returned; none when it created no run.
   */
  const submission = async <R extends SubmitResult | undefined>(
    caller: SubmitHooks | undefined,
    send: (hooks: SubmitHooks) => Promise<R>,
  ): Promise<R> => {
    let reported = false;
    const result = await send({
      ...caller,
      onCommitted: (run) => {
        // Queued like the rest: they go out on the next turn of the event loop, after the store
        // has sent its flush and long before that flush returns.
        if (!reported) submitted(run, publish);
        reported = true;
        caller?.onCommitted?.(run);
      },
    });
    if (!reported && result?.created) submitted(result.run, publish);
    return result;
  };
  const { groupCommit, newSessionSubmit, claimOnSubmit } = store;
  const overrides: Partial<RunStoreV1> = {
    submit: (input, hooks) => submission(hooks, (h) => store.submit(input, h)),
    ...(groupCommit && {
      groupCommit: {
        specVersion: "v1",
        async commitSteps(fence, checkpoints) {
          const run = await groupCommit.commitSteps(fence, checkpoints);
          publish(eventOf(run));
          return run;
        },
      },
    }),
    ...(newSessionSubmit && {
      newSessionSubmit: {
        specVersion: "v1",
        submitIfNew: (input, sessionIds, hooks) =>
          submission(hooks, (h) => newSessionSubmit.submitIfNew(input, sessionIds, h)),
      },
    }),
    ...(claimOnSubmit && {
      claimOnSubmit: {
        specVersion: "v1",
        submit: (input, claim, hooks) => submission(hooks, (h) => claimOnSubmit.submit(input, claim, h)),
        ...(claimOnSubmit.submitIfNew && {
          submitIfNew: (input, sessionIds, claim, hooks) =>
            submission(hooks, (h) => claimOnSubmit.submitIfNew!(input, sessionIds, claim, h)),
        }),
      },
    }),
  };
  const wrapped = new Map<PropertyKey, unknown>();
  return new Proxy(store, {
    get(target, key) {
      if (Object.hasOwn(overrides, key)) return overrides[key as keyof RunStoreV1];
      const value = Reflect.get(target, key, target);
      const after = AFTER_COMMIT[key as keyof RunStoreV1];
      if (typeof value !== "function") return value;
      let fn = wrapped.get(key);
      if (fn === undefined) {
        fn = after
          ? async (...args: never[]) => {
              const result = await (value as (...a: never[]) => Promise<never>).apply(target, args);
              after(result, args, publish);
              return result;
            }
          : (value as (...a: unknown[]) => unknown).bind(target);
        wrapped.set(key, fn);
      }
      return fn;
    },
  });
}
