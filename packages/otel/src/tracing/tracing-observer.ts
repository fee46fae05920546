import type { ObservedFacts, ObservedSpan, ObservedWork, RunObserver } from "@openrath/core";
import { type Attributes, type Tracer, trace } from "@opentelemetry/api";
import { OPENRATH } from "./attributes.js";
import { currentScope, inScope, parentContext } from "./scope.js";
import { failWith, finishWith, startOf } from "./work-spans.js";

/** Options of {@link tracingObserver}. */
export interface TracingObserverOptions {
  readonly tracer: Tracer;
  /** Record message content, tool arguments and results, commands and memory queries (default false). */
  readonly captureContent?: boolean;
  /** Attributes every span carries (a durable step's run, step and worker ids). */
  readonly base?: Attributes;
  /**
   * Whether no span can be recorded now (no SDK registered behind the global tracer): the work
   * then runs with no span at all, not even a no-op one. Default: never.
   */
  readonly idle?: () => boolean;
}

const NOT_RECORDED: ObservedSpan = Object.freeze({ link: undefined, note: () => {} });

/**
 * A {@link RunObserver} recording each piece of a run's work as an OpenTelemetry span, child of
 * the work around it. With `idle` saying no SDK is registered, the work runs untouched; a span
 * the SDK does not record (sampled out) costs one `startSpan` and changes no context.
 */
export function tracingObserver(options: TracingObserverOptions): RunObserver {
  const { tracer } = options;
  const captureContent = options.captureContent ?? false;
  const idle = options.idle;
  return {
    async observe<T>(work: ObservedWork, run: (span: ObservedSpan) => Promise<T>): Promise<T> {
      if (idle?.()) return run(NOT_RECORDED);
      const outer = currentScope();
      const parent = parentContext();
      const base = options.base ?? outer?.base;
      const start = startOf(work, captureContent, base);
      const span = tracer.startSpan(start.name, { kind: start.kind, attributes: start.attributes }, parent);
      if (!span.isRecording()) {
        span.end();
        return run(NOT_RECORDED);
      }
      const { traceId, spanId } = span.spanContext();
      let replayed = work.kind === "model" && work.provider.name === "replay";
      const handle: ObservedSpan = {
        link: { traceId, spanId },
        note(facts: ObservedFacts) {
          for (const [key, value] of Object.entries(facts)) {
            if (key === "replayed") replayed = true;
            span.setAttribute(`openrath.${key}`, value);
          }
        },
      };
      const scope = {
        context: trace.setSpan(parent, span),
        base: base ?? {},
        tracer,
        captureContent,
      };
      try {
        const result = await inScope(scope, () => run(handle));
        finishWith(span, work, result, replayed, captureContent);
        return result;
      } catch (error) {
        failWith(span, error);
        throw error;
      } finally {
        span.end();
      }
    },
  };
}

/** The base attributes of a scope, with the session and lineage ids left to each span. */
export function runAttributes(ids: {
  runId: string;
  stepId?: string;
  attempt?: number;
  workerId?: string;
  tenantId?: string;
  workflow?: string;
}): Attributes {
  const out: Attributes = { [OPENRATH.runId]: ids.runId };
  if (ids.stepId !== undefined) out[OPENRATH.stepId] = ids.stepId;
  if (ids.attempt !== undefined) out[OPENRATH.stepAttempt] = ids.attempt;
  if (ids.workerId !== undefined) out[OPENRATH.workerId] = ids.workerId;
  if (ids.tenantId !== undefined) out[OPENRATH.tenantId] = ids.tenantId;
  if (ids.workflow !== undefined) out[OPENRATH.workflow] = ids.workflow;
  return out;
}
