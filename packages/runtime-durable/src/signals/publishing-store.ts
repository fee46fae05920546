import type { Claim, RunRecord } from "../contract/run-records.js";
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
 * The writes that take {@link SubmitHooks}, and where in their arguments: their signals go out
 * when the store reports the run committed, before it waits for durability.
 */
const HOOKS_ARGUMENT: Partial<Record<keyof RunStoreV1, number>> = { submit: 1, submitIfNew: 2 };

/**
 * For each write of the store, the signals its committed result calls for (for a submission: when
 * the store did not report it through `onCommitted`).
 */
const AFTER_COMMIT: Partial<
  Record<keyof RunStoreV1, (result: never, args: readonly never[], publish: Publish) => void>
> = {
  submit: (result: { run: RunRecord; created: boolean }, _args, publish) => {
    if (result.created) submitted(result.run, publish);
  },
  submitIfNew: (result: { run: RunRecord; created: boolean } | undefined, _args, publish) => {
    if (result?.created) submitted(result.run, publish);
  },
  claim: (claims: Claim[], _args, publish) => {
    for (const claim of claims) publish(eventOf(claim.run));
  },
  reclaim: (claims: Claim[], _args, publish) => {
    for (const claim of claims) publish(eventOf(claim.run));
  },
  commitStep: (run: RunRecord, _args, publish) => publish(eventOf(run)),
  commitSteps: (run: RunRecord, _args, publish) => publish(eventOf(run)),
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
 * A submission's go out as soon as the store reports its run committed
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
  const wrapped = new Map<PropertyKey, unknown>();
  return new Proxy(store, {
    get(target, key) {
      const value = Reflect.get(target, key, target);
      const after = AFTER_COMMIT[key as keyof RunStoreV1];
      if (typeof value !== "function") return value;
      let fn = wrapped.get(key);
      if (fn === undefined) {
        const hooksAt = HOOKS_ARGUMENT[key as keyof RunStoreV1];
        fn = after
          ? async (...args: never[]) => {
              let reported = false;
              if (hooksAt !== undefined) {
                const caller = args[hooksAt] as SubmitHooks | undefined;
                const hooks: SubmitHooks = {
                  ...caller,
                  onCommitted: (run) => {
                    // Queued like the rest: they go out on the next turn of the event loop, after
                    // the store has sent its flush and long before that flush returns.
                    if (!reported) submitted(run, publish);
                    reported = true;
                    caller?.onCommitted?.(run);
                  },
                };
                const withHooks: unknown[] = [...args];
                withHooks[hooksAt] = hooks;
                args = withHooks as never[];
              }
              const result = await (value as (...a: never[]) => Promise<never>).apply(target, args);
              if (!reported) after(result, args, publish);
              return result;
            }
          : (value as (...a: unknown[]) => unknown).bind(target);
        wrapped.set(key, fn);
      }
      return fn;
    },
  });
}
