import type { RunStatus } from "./status.js";

/**
 * A signal: a hint that something changed in the store. Signals never carry state; a lost
 * signal delays a worker (until its slow safety sweep) but never loses or corrupts a run.
 *
 * - `work`: a run became claimable (submitted, requeued, a retry's time came). `planHash` lets a
 *   worker that cannot run the plan stay asleep.
 * - `cancel`: a run was cancelled; the worker holding it aborts the step's signal.
 * - `event`: run `runId` has events up to `seq`; live subscribers read them from the store.
 *   `live` carries an ephemeral payload (such as a token delta) that is not stored.
 */
export type Signal =
  | { readonly kind: "work"; readonly planHash?: string }
  | { readonly kind: "cancel"; readonly runId: string }
  | {
      readonly kind: "event";
      readonly runId: string;
      readonly seq: number;
      readonly live?: unknown;
      /** The run's status after the change, when the publisher knows it (waiters skip a read otherwise needed). */
      readonly status?: RunStatus;
    };

/** The topics a listener subscribes to: all work signals, all cancels, or one run's events. */
export type SignalTopic = "work" | "cancel" | `run:${string}`;

/** What a signals backend can do. */
export interface SignalsCapabilities {
  /** Signals reach other processes (LISTEN/NOTIFY on a server, Redis); in-process: false. */
  readonly crossProcess: boolean;
  /** Ephemeral `live` payloads (token deltas) are delivered. */
  readonly livePayloads: boolean;
  /**
   * `heardRuns` says what the client heard of runs ending or parking ({@link HeardRunsV1}), so a
   * waiter may skip a read. True exactly when `heardRuns` is present; absent means false.
   */
  readonly heardRuns?: boolean;
}

/**
 * A fast path of a signals client (`capabilities.heardRuns`): what it heard of runs ending or
 * parking. A waiter that knows when it submitted a run, and learns that nothing ended or parked it
 * since, waits for the run's next signal without reading it first. The plain path reads the run,
 * then waits.
 */
export interface HeardRunsV1 {
  readonly specVersion: "v1";
  /**
   * The last status that ends or parks the run this client was delivered (or a later status of
   * that run), `null` when it heard none, or `undefined` when it may have missed a signal since
   * `since` (a `performance.now()` time in this process: it was not listening yet, lost its
   * connection, or forgot old entries).
   */
  heard(runId: string, since: number): RunStatus | null | undefined;
}

/**
 * The signals contract, version 1: wake-ups, cancels and live per-run events. Implemented
 * in-process (`inProcessSignals`), by PostgreSQL `LISTEN/NOTIFY` in `@openrath/store-postgres` and
 * on Redis in `@openrath/signals-redis`. Delivery is at-most-once and best-effort by design: state
 * lives in the store.
 */
export interface SignalsV1 {
  readonly specVersion: "v1";
  readonly name: string;
  readonly capabilities: SignalsCapabilities;
  /** Publishes a signal outside a store transaction (stores that notify on commit do it themselves). */
  publish(signal: Signal): Promise<void>;
  /**
   * Calls `listener` for every signal on `topic` until the returned function is called. The
   * subscription is active when the promise resolves.
   */
  subscribe(topic: SignalTopic, listener: (signal: Signal) => void): Promise<() => Promise<void>>;
  /** Fast path: what this client heard of runs ending or parking, when `capabilities.heardRuns` is true. */
  readonly heardRuns?: HeardRunsV1;
  /** Stops delivering and releases connections. Idempotent. */
  close(): Promise<void>;
}

/** The topic a signal is delivered on. */
export function topicOf(signal: Signal): SignalTopic {
  return signal.kind === "event" ? `run:${signal.runId}` : signal.kind;
}
