export { GEN_AI, OPENRATH } from "./attributes.js";
export { type OpenRathTracing, type OpenRathTracingOptions, openrathTracing } from "./openrath-tracing.js";
export { currentTraceContext, spanContextOf, traceContextOf } from "./trace-context.js";
