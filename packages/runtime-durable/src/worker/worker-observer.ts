/**
 * What a worker reports to its {@link WorkerObserver}: structured events for metrics, never log
 * lines to parse. Run ids are there for the observer to use or drop; a metric must not label by them.
 */
export type WorkerEvent =
  /** One claim sent to the store: how many runs it took and its round trip (`failed`: the store did not answer). */
  | {
      readonly type: "claim";
      readonly workerId: string;
      readonly claimed: number;
      readonly durationMs: number;
      readonly failed: boolean;
    }
  /** A run claimed for this worker by a submission (claim on submit): no claim round trip. */
  | { readonly type: "adopted"; readonly workerId: string; readonly runId: string; readonly workflow: string }
  /** The worker learnt a run's lease is gone (renewal refused or not in time); its step is aborted. */
  | {
      readonly type: "lease_lost";
      readonly workerId: string;
      readonly runId: string;
      readonly workflow: string;
      readonly reason: string;
    }
  /** Runs whose leases expired in the database, requeued by this worker's sweep. */
  | {
      readonly type: "leases_expired";
      readonly workerId: string;
      readonly requeued: number;
      readonly timedOut: number;
    }
  /** Runs this worker's identity still held, taken back at start (a restart). */
  | { readonly type: "reclaimed"; readonly workerId: string; readonly runs: number };

/**
 * Receives a worker's {@link WorkerEvent}s as they happen (`WorkerOptions.observer`). Called
 * synchronously: it must return quickly; what it throws is ignored.
 */
export type WorkerObserver = (event: WorkerEvent) => void;
