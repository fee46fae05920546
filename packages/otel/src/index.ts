/**
 * `@openrath/otel`: OpenTelemetry instrumentation for OpenRath through the hooks core and the
 * durable runtime offer. With no SDK registered every instrument is the API's no-op.
 */

export {
  METRIC_ATTRIBUTES,
  METRIC_NAMES,
  type OpenRathMetrics,
  type OpenRathMetricsOptions,
  openrathMetrics,
} from "./metrics/index.js";
export { type OpenRathTelemetry, type OpenRathTelemetryOptions, openrathTelemetry } from "./telemetry.js";
export {
  currentTraceContext,
  GEN_AI,
  OPENRATH,
  type OpenRathTracing,
  type OpenRathTracingOptions,
  openrathTracing,
  spanContextOf,
  traceContextOf,
} from "./tracing/index.js";
