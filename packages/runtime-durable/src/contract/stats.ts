import type { RunStatus } from "./status.js";

/** The number of runs of one workflow in one status. */
export interface RunCount {
  readonly workflow: string;
  readonly status: RunStatus;
  readonly count: number;
}

/** The due queue of one workflow: queued runs whose `notBefore` has passed. */
export interface QueueCount {
  readonly workflow: string;
  /** Queued runs a claim could take now. */
  readonly due: number;
  /** When the oldest of them became due (`notBefore`, database clock, epoch ms), or `null` with none. */
  readonly oldestDueAt: number | null;
}

/**
 * A snapshot of the counts that live in the store, read in one call (for metrics' observable
 * gauges, at most once per collection). Statuses and workflows with no run are absent.
 */
export interface StoreStatistics {
  /** The database's clock when the counts were read (epoch ms), to age `oldestDueAt` against. */
  readonly at: number;
  /** Runs by workflow and status, across tenants. */
  readonly runs: readonly RunCount[];
  /** The due queue by workflow (workflows with queued runs only). */
  readonly queue: readonly QueueCount[];
  /** Effects parked for an operator (`needs_review`). 0 on a store without a journal. */
  readonly effectsUnderReview: number;
  /** Interrupts waiting for a decision (`pending`). 0 on a store without a journal. */
  readonly openInterrupts: number;
}

/**
 * Store-wide counts for monitoring (`capabilities.stats`): runs by status and workflow, the due
 * queue and its oldest run, effects under review, open interrupts. Without it a monitor has no
 * store counts (it may still count what its own workers see).
 */
export interface StoreStatsV1 {
  readonly specVersion: "v1";
  /**
   * Reads every count in one snapshot, across tenants: meant for an operator's metrics endpoint,
   * never for a tenant's API (no tenant filter). The cost grows with the runs table; call it once
   * per scrape, not per request.
   *
   * @throws `store_unavailable` when the database cannot be reached.
   */
  read(): Promise<StoreStatistics>;
}
