import type { TraceContext } from "@openrath/runtime-durable";
import {
  type Context,
  createTraceState,
  isSpanContextValid,
  ROOT_CONTEXT,
  type SpanContext,
  trace,
} from "@opentelemetry/api";

const TRACEPARENT = /^([0-9a-f]{2})-([0-9a-f]{32})-([0-9a-f]{16})-([0-9a-f]{2})(?:-.*)?$/;

/**
 * The remote span context a stored W3C trace context names (parsed here, not by the global
 * propagator, so it works with no SDK registered), or `undefined` when it is malformed.
 */
export function spanContextOf(traceContext: TraceContext | undefined): SpanContext | undefined {
  if (!traceContext) return undefined;
  const match = TRACEPARENT.exec(traceContext.traceparent);
  if (!match || match[1] === "ff") return undefined;
  const spanContext: SpanContext = {
    traceId: match[2]!,
    spanId: match[3]!,
    traceFlags: Number.parseInt(match[4]!, 16) & 0xff,
    isRemote: true,
    ...(traceContext.tracestate ? { traceState: createTraceState(traceContext.tracestate) } : {}),
  };
  return isSpanContextValid(spanContext) ? spanContext : undefined;
}

/** `base` with the stored trace context as its remote parent (`base` itself without one). */
export function contextOf(traceContext: TraceContext | undefined, base: Context = ROOT_CONTEXT): Context {
  const spanContext = spanContextOf(traceContext);
  return spanContext ? trace.setSpanContext(base, spanContext) : base;
}

/** The W3C trace context of a span context (its `traceparent`, and `tracestate` when it has one). */
export function traceContextOf(spanContext: SpanContext): TraceContext {
  const flags = (spanContext.traceFlags & 0xff).toString(16).padStart(2, "0");
  const traceparent = `00-${spanContext.traceId}-${spanContext.spanId}-${flags}`;
  const state = spanContext.traceState?.serialize();
  return state ? { traceparent, tracestate: state } : { traceparent };
}

/**
 * The W3C trace context of the span active in `context` (default: the active context), or
 * `undefined` when there is none: what to pass as `SubmitOptions.traceContext` or send as the
 * `traceparent` header.
 */
export function currentTraceContext(context?: Context): TraceContext | undefined {
  const span = context ? trace.getSpan(context) : trace.getActiveSpan();
  const spanContext = span?.spanContext();
  return spanContext && isSpanContextValid(spanContext) ? traceContextOf(spanContext) : undefined;
}
