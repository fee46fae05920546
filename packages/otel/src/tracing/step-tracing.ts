import { Session } from "@openrath/core";
import type {
  RunRecord,
  StepContext,
  StepMiddleware,
  TraceContext,
  TraceSubmission,
} from "@openrath/runtime-durable";
import { context, SpanKind, SpanStatusCode, type Tracer, trace } from "@opentelemetry/api";
import { OPENRATH } from "./attributes.js";
import { inScope, parentContext } from "./scope.js";
import { contextOf, traceContextOf } from "./trace-context.js";
import { runAttributes, tracingObserver } from "./tracing-observer.js";
import { failWith } from "./work-spans.js";

/** What the durable runtime's tracing needs: the tracer and the content setting. */
export interface StepTracingOptions {
  readonly tracer: Tracer;
  readonly captureContent?: boolean;
}

/**
 * The step middleware that traces each step attempt (a `CONSUMER` span `step <id>` continuing the
 * run's stored trace context, on whichever worker runs it), installs a run observer on the step's
 * context so its agent loops, model and tool calls are its children, and records the run's span
 * when this worker ends the run (see ADR 0032).
 */
export function tracingMiddleware(options: StepTracingOptions): StepMiddleware {
  const { tracer } = options;
  const captureContent = options.captureContent ?? false;
  return {
    name: "otel-tracing",
    async around<T>(ctx: StepContext, next: (context: StepContext) => Promise<T>): Promise<T> {
      const parent = contextOf(ctx.traceContext, context.active());
      const base = runAttributes({
        runId: ctx.runId,
        stepId: ctx.stepId,
        attempt: ctx.attempt,
        workerId: ctx.workerId,
        tenantId: ctx.tenantId,
        ...(ctx.workflow !== undefined ? { workflow: ctx.workflow } : {}),
      });
      const span = tracer.startSpan(
        `step ${ctx.stepId}`,
        {
          kind: SpanKind.CONSUMER,
          attributes: {
            ...base,
            ...(ctx.sessionId !== undefined
              ? { [OPENRATH.sessionId]: ctx.sessionId, [OPENRATH.lineageNodeId]: ctx.sessionId }
              : {}),
          },
        },
        parent,
      );
      const observer = tracingObserver({ tracer, captureContent, base });
      const scope = { context: trace.setSpan(parent, span), base, tracer, captureContent };
      try {
        const result = await inScope(scope, () => next({ ...ctx, observer }));
        if (result instanceof Session) span.setAttribute(OPENRATH.lineageNodeId, result.lineage.id);
        return result;
      } catch (error) {
        failWith(span, error);
        throw error;
      } finally {
        span.end();
      }
    },
    ended(run: RunRecord): void {
      const span = tracer.startSpan(
        `run ${run.workflow}`,
        {
          kind: SpanKind.INTERNAL,
          startTime: run.createdAt,
          attributes: {
            ...runAttributes({ runId: run.id, tenantId: run.tenantId, workflow: run.workflow }),
            [OPENRATH.sessionId]: run.sessionId,
            [OPENRATH.lineageNodeId]: run.sessionId,
            [OPENRATH.runStatus]: run.status,
          },
        },
        contextOf(run.traceContext),
      );
      if (run.status !== "succeeded") {
        if (run.error) span.setAttribute("error.type", run.error.code);
        span.setStatus({ code: SpanStatusCode.ERROR, message: run.error?.message ?? run.status });
      }
      span.end(Math.max(run.updatedAt, run.createdAt));
    },
  };
}

/**
 * `DurableRuntimeOptions.traceSubmit`: records the submission as a `PRODUCER` span `submit
 * <workflow>` under the caller's trace context (or the active span), and returns that span's
 * context to store with the run, so the run's steps and its span are its children. When the span
 * is not recorded (no SDK, sampled out), the caller's context passes through unchanged.
 */
export function tracingSubmit(
  options: StepTracingOptions,
): (submission: TraceSubmission) => TraceContext | undefined {
  const { tracer } = options;
  return (submission) => {
    const parent = submission.traceContext ? contextOf(submission.traceContext) : parentContext();
    const span = tracer.startSpan(
      `submit ${submission.workflow}`,
      {
        kind: SpanKind.PRODUCER,
        attributes: { [OPENRATH.workflow]: submission.workflow, [OPENRATH.tenantId]: submission.tenantId },
      },
      parent,
    );
    const recorded = span.isRecording();
    const spanContext = span.spanContext();
    span.end();
    return recorded ? traceContextOf(spanContext) : submission.traceContext;
  };
}
