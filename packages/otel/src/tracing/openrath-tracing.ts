import type { RunObserver } from "@openrath/core";
import type { StepMiddleware, TraceContext, TraceSubmission } from "@openrath/runtime-durable";
import { ProxyTracerProvider, type Tracer, trace } from "@opentelemetry/api";
import { installBranchSpans } from "./branch-spans.js";
import { tracingMiddleware, tracingSubmit } from "./step-tracing.js";
import { tracingObserver } from "./tracing-observer.js";

/** Options of {@link openrathTracing}. */
export interface OpenRathTracingOptions {
  /** The tracer every span is made with (default `trace.getTracer("@openrath/otel")`). */
  readonly tracer?: Tracer;
  /**
   * Record content on spans: model input and output messages (`gen_ai.input.messages`,
   * `gen_ai.output.messages`), tool arguments and results, sandbox command lines and memory
   * queries. Default `false`: only names, ids, models, token counts and outcomes.
   */
  readonly captureContent?: boolean;
}

/** What {@link openrathTracing} gives. */
export interface OpenRathTracing {
  /** For `agent.run(session, { observer })` outside a durable runtime. */
  readonly observer: RunObserver;
  /** The step middleware tracing each step attempt and the run's end. */
  readonly middleware: StepMiddleware;
  /** `DurableRuntimeOptions.traceSubmit`: the submission's span, whose context is stored with the run. */
  readonly traceSubmit: (submission: TraceSubmission) => TraceContext | undefined;
}

/**
 * Tracing of OpenRath through the OpenTelemetry API. Also installs core's process-wide fork and
 * merge listener (once), which records branches made inside traced work.
 */
export function openrathTracing(options: OpenRathTracingOptions = {}): OpenRathTracing {
  const tracer = options.tracer ?? trace.getTracer("@openrath/otel");
  const captureContent = options.captureContent ?? false;
  installBranchSpans();
  return {
    // The global tracer records nothing until an SDK is registered: skip the work's span then.
    observer: tracingObserver({
      tracer,
      captureContent,
      ...(options.tracer ? {} : { idle: noSdkRegistered }),
    }),
    middleware: tracingMiddleware({ tracer, captureContent }),
    traceSubmit: tracingSubmit({ tracer, captureContent }),
  };
}

/** The global tracer provider's delegate while none is registered (the API's no-op provider). */
const NO_SDK = new ProxyTracerProvider().getDelegate();

/**
 * Whether no SDK is registered behind the global tracer provider right now: one property read
 * and a comparison, so the check costs nothing on every call; registering an SDK later (or
 * `trace.disable()`) is seen at once.
 */
function noSdkRegistered(): boolean {
  const provider = trace.getTracerProvider();
  return provider instanceof ProxyTracerProvider && provider.getDelegate() === NO_SDK;
}
