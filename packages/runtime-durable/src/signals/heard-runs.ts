import type { Signal } from "../contract/signals.js";
import { isTerminal, type RunStatus } from "../contract/status.js";

/** How many runs a {@link HeardRuns} remembers (an entry is about 100 bytes). */
const HEARD_LIMIT = 8192;

/**
 * What a signals client has heard of runs ending or parking, for its `heardRuns`: the last
 * status announced for each run it heard end or park (and any later status of such a run), and
 * the latest time it may have missed something (an entry it forgot, or a gap in its connection).
 * Times are `performance.now()` milliseconds.
 */
export class HeardRuns {
  private readonly runs = new Map<string, { status: RunStatus; at: number }>();
  private lostAt: number;

  /** `listening`: whether the client hears every signal from now on (else: not until {@link lost}). */
  constructor(listening = true) {
    this.lostAt = listening ? performance.now() : Number.POSITIVE_INFINITY;
  }

  /** Notes a delivered signal. */
  note(signal: Signal): void {
    if (signal.kind !== "event" || signal.status === undefined) return;
    const { runId, status } = signal;
    const parks = status === "waiting" || status === "needs_review";
    if (!isTerminal(status) && !parks && !this.runs.has(runId)) return;
    const at = performance.now();
    this.runs.delete(runId);
    this.runs.set(runId, { status, at });
    if (this.runs.size > HEARD_LIMIT) {
      const [oldest, entry] = this.runs.entries().next().value!;
      this.runs.delete(oldest);
      this.lostAt = Math.max(this.lostAt, entry.at);
    }
  }

  /** From now on every signal is heard again; anything before may have been missed. */
  lost(): void {
    this.lostAt = performance.now();
  }

  /**
   * The last status heard for the run among those that end or park it (or a later one), `null`
   * when nothing of the kind was heard, or `undefined` when something since `since` may have been missed.
   */
  heard(runId: string, since: number): RunStatus | null | undefined {
    if (this.lostAt >= since) return undefined;
    return this.runs.get(runId)?.status ?? null;
  }
}
