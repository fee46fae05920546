import type { CallHooks, RunObserver } from "@openrath/core";
import type {
  StepMiddleware,
  TraceContext,
  TraceSubmission,
  WorkerObserver,
} from "@openrath/runtime-durable";
import type { Meter, Tracer } from "@opentelemetry/api";
import { type OpenRathMetrics, openrathMetrics } from "./metrics/index.js";
import { openrathTracing } from "./tracing/openrath-tracing.js";

/** Options of {@link openrathTelemetry}. */
export interface OpenRathTelemetryOptions {
  /** Default `trace.getTracer("@openrath/otel")`. */
  readonly tracer?: Tracer;
  /** Default `metrics.getMeter("@openrath/otel")`. */
  readonly meter?: Meter;
  /** Record message content, tool arguments and results on spans (default false). */
  readonly captureContent?: boolean;
}

/** Everything OpenRath needs to be traced and measured, ready to pass where each part goes. */
export interface OpenRathTelemetry {
  /**
   * Step middleware for `createDurableRuntime({ middleware })` or `runtime.worker({ middleware })`:
   * step attempt spans (children of the run's stored trace), the run observer on every step's
   * context, the run's span at its end, and the metrics' step middleware.
   */
  readonly middleware: readonly StepMiddleware[];
  /** For `createDurableRuntime({ traceSubmit })`: the submission's span, stored with the run. */
  readonly traceSubmit: (submission: TraceSubmission) => TraceContext | undefined;
  /** For `agent.run(session, { observer })` / `flow.run(session, { observer })` outside a durable step. */
  readonly observer: RunObserver;
  /** The metrics' call hooks, for `agent.run(session, { calls })` outside a durable step. */
  readonly calls: CallHooks;
  /**
   * Both of the above as run options: `agent.run(session, telemetry.runOptions)`, or spread with
   * your own (`{ ...telemetry.runOptions, signal }`).
   */
  readonly runOptions: { readonly observer: RunObserver; readonly calls: CallHooks };
  /**
   * The durable runtime's options: `createDurableRuntime({ store, ...telemetry.runtime })`. Its
   * middleware runs outside the step journal, so it holds the tracing only; the metrics go on
   * the worker ({@link worker}).
   */
  readonly runtime: {
    readonly middleware: readonly StepMiddleware[];
    readonly traceSubmit: (submission: TraceSubmission) => TraceContext | undefined;
  };
  /**
   * A worker's options: `runtime.worker({ ...telemetry.worker })`. The metrics' step middleware
   * (inside the journal, where it tells journal hits from live calls) and the worker observer
   * (claims, leases, reclaims).
   */
  readonly worker: {
    readonly middleware: readonly StepMiddleware[];
    readonly observer: WorkerObserver;
  };
  /** The metrics part (store gauges: `telemetry.metrics.observeStore(store)`). */
  readonly metrics: OpenRathMetrics;
}

/**
 * OpenRath's traces and metrics through the OpenTelemetry API. Bring the SDK and exporter; with
 * none registered every span and instrument is the API's no-op.
 *
 * @example
 * ```ts
 * import { openrathTelemetry } from "@openrath/otel";
 * const telemetry = openrathTelemetry();
 * const runtime = createDurableRuntime({ store, ...telemetry.runtime });
 * await runtime.worker({ ...telemetry.worker }).start();
 * await agent.run(session, telemetry.runOptions); // outside a durable step
 * ```
 */
export function openrathTelemetry(options: OpenRathTelemetryOptions = {}): OpenRathTelemetry {
  const tracing = openrathTracing({
    ...(options.tracer ? { tracer: options.tracer } : {}),
    ...(options.captureContent !== undefined ? { captureContent: options.captureContent } : {}),
  });
  const metrics = openrathMetrics(options.meter ? { meter: options.meter } : {});
  const middleware = [tracing.middleware, ...metrics.middleware];
  return {
    middleware,
    traceSubmit: tracing.traceSubmit,
    observer: tracing.observer,
    calls: metrics.calls,
    runOptions: { observer: tracing.observer, calls: metrics.calls },
    runtime: { middleware: [tracing.middleware], traceSubmit: tracing.traceSubmit },
    worker: { middleware: metrics.middleware, observer: metrics.worker },
    metrics,
  };
}
