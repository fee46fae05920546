import type { RunStoreV1 } from "../contract/run-store.js";
import { submitQueuedMessages } from "../queue/submit-queued.js";
import { fireSchedules } from "../schedules/fire-schedules.js";
import { dispatchWebhooks, type WebhookDeliveryOptions } from "../webhooks/dispatch-webhooks.js";
import type { WorkerLog } from "./worker-log.js";

/** Options of a worker's periodic jobs: schedules and webhook deliveries. */
export interface PeriodicJobOptions {
  /**
   * How often the worker fires due schedules and sends due webhook deliveries, in milliseconds
   * (default 1000); `false` turns both off in this worker. Only on a store with
   * `capabilities.schedules` or `capabilities.webhooks`.
   */
  readonly tickMs?: number | false;
  readonly webhooks?: WebhookDeliveryOptions;
}

/**
 * The jobs a worker runs on a timer besides its runs: due schedules (each firing once across all
 * workers, by the store's row locks), messages queued behind sessions that are free again, and the
 * webhook outbox. One tick at a time; a failing store
 * is logged once per outage and tried again on the next tick.
 */
export class PeriodicJobs {
  private timer: NodeJS.Timeout | undefined;
  private ticking: Promise<void> | undefined;
  private stopped = true;
  private failing = false;

  constructor(
    private readonly store: RunStoreV1,
    private readonly log: WorkerLog,
    private readonly options: PeriodicJobOptions = {},
  ) {}

  /** Whether the store has anything for these jobs to do. */
  get wanted(): boolean {
    const { capabilities } = this.store;
    return (
      this.options.tickMs !== false && (capabilities.schedules === true || capabilities.webhooks === true)
    );
  }

  start(): void {
    if (!this.wanted || !this.stopped) return;
    this.stopped = false;
    this.schedule();
  }

  /** Stops the timer and waits for a tick in flight. */
  async stop(): Promise<void> {
    this.stopped = true;
    clearTimeout(this.timer);
    await this.ticking;
  }

  private schedule() {
    if (this.stopped) return;
    const tickMs = Math.max(10, typeof this.options.tickMs === "number" ? this.options.tickMs : 1000);
    this.timer = setTimeout(() => {
      this.ticking = this.tick().finally(() => {
        this.ticking = undefined;
        this.schedule();
      });
    }, tickMs);
  }

  private async tick(): Promise<void> {
    try {
      const fired = await fireSchedules(this.store);
      if (fired.runIds.length > 0 || fired.failed > 0)
        this.log("info", "fired schedules", { runs: fired.runIds.length, failed: fired.failed });
      if (!this.stopped) {
        const queued = await submitQueuedMessages(this.store);
        if (queued.length > 0)
          this.log("info", "submitted messages queued behind busy sessions", { runs: queued.length });
      }
      if (!this.stopped) await dispatchWebhooks(this.store, this.options.webhooks);
      if (this.failing) this.log("info", "schedules and webhooks reachable again", {});
      this.failing = false;
    } catch (error) {
      if (!this.failing)
        this.log("warn", "firing schedules or sending webhooks failed; trying again next tick", {
          code: (error as { code?: unknown }).code,
          error: (error as Error).message,
        });
      this.failing = true;
    }
  }
}
