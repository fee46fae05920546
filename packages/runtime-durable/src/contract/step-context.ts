import type { CallHooks, CallPolicy, JsonValue, RunObserver, RunScope } from "@openrath/core";
import type { Fence, RunRecord, TraceContext } from "./run-records.js";

/** Structured logging inside a step; lines carry the run, step and attempt. */
export interface StepLogger {
  debug(message: string, data?: Record<string, unknown>): void;
  info(message: string, data?: Record<string, unknown>): void;
  warn(message: string, data?: Record<string, unknown>): void;
  error(message: string, data?: Record<string, unknown>): void;
}

/**
 * A request to pause the run for a human (built by the journaled agent loop; see ADR 0011). The
 * shape is fixed now so steps written today keep compiling.
 */
export interface InterruptRequest {
  readonly kind: "approval" | "input" | "review";
  /** What the operator is shown. */
  readonly request: JsonValue;
  /** A Standard Schema or JSON Schema the decision's payload must satisfy. */
  readonly schema?: unknown;
  readonly timeoutMs?: number;
  /** The decision taken when `timeoutMs` passes; without one the run ends `timed_out`. */
  readonly onTimeout?: InterruptDecision;
}

/** A decision on an interrupt. */
export interface InterruptDecision {
  readonly kind: "approve" | "edit" | "reject" | "respond";
  readonly actor?: string;
  readonly reason?: string;
  readonly payload?: JsonValue;
}

/**
 * What a step receives beside the run's Session. Every field is stable for the step's attempt.
 */
export interface StepContext {
  /**
   * Fires on cancel (within a second, through the cancel signal), on the run's deadline, on the
   * step's timeout, and when the worker loses the lease (at the next heartbeat). Pass it to every
   * agent run, tool and I/O call.
   */
  readonly signal: AbortSignal;
  readonly runId: string;
  /** The run's workflow name (its plan's), for labels such as metrics'; absent outside a worker. */
  readonly workflow?: string;
  readonly stepId: string;
  /** 1 for the first attempt of this step; survives crashes. */
  readonly attempt: number;
  readonly tenantId: string;
  readonly workerId: string;
  /** The run's deadline (epoch ms), or `null`. */
  readonly deadline: number | null;
  /** The caller's metadata of the run. */
  readonly metadata: Readonly<Record<string, JsonValue>>;
  readonly logger: StepLogger;
  /**
   * The lease this attempt runs under. Every durable write made on the step's behalf (events now;
   * journal entries and effect records later) carries it and is rejected once it is stale.
   */
  readonly fence: Fence;
  /** Appends a durable event to the run (fenced), such as `{ type: "step.progress", data }`. */
  emit(type: string, data?: JsonValue): Promise<void>;
  /**
   * Resolves once the checkpoints of every earlier step of this run are committed; rejects (code
   * `stale_fence`) if one of them was refused. A worker starts a step while the previous step's
   * commit is still in flight, so call this before an outside effect that must not happen unless
   * the earlier steps are durable. The journal (model and tool calls, interrupts) and `emit` wait
   * for it on their own.
   */
  checkpointed(): Promise<void>;
  /**
   * Publishes an ephemeral event (a token delta, a progress tick) to the run's live subscribers
   * (`runtime.stream(runId)`): fanned out through the runtime's signals, never stored, best effort
   * (dropped when the signals backend carries no live payloads or is away). Returns at once.
   */
  emitLive(type: string, data?: JsonValue): void;
  /**
   * Pauses the run for a human decision and resolves with it. Needs the journaled runtime; on a
   * runtime without it, rejects with code `not_supported`.
   */
  interrupt(request: InterruptRequest): Promise<InterruptDecision>;
  /**
   * Hooks installed by extensions (the step journal, the effect ledger), keyed by name. Empty in
   * this release; extensions read their own key.
   */
  readonly extensions: Readonly<Record<string, unknown>>;
  /**
   * The call hooks every agent, selector, compressor and workflow run in the step goes through
   * (the journal installs them), so `agent.run(session, ctx)` is journaled. Absent without one.
   */
  readonly calls?: CallHooks;
  /**
   * The worker's call policy (`WorkerOptions.policy`), which `agent.run(session, ctx)` applies to
   * every model and tool call of the step before it is made. Absent without one.
   */
  readonly policy?: CallPolicy;
  /**
   * The step's branch numbering, shared by every run in the step so each call has one journal
   * position. Absent without a journal.
   */
  readonly scope?: RunScope;
  /**
   * The run's observer (a tracing middleware installs it), which `agent.run(session, ctx)` shows
   * every agent loop, model and tool call of the step. Absent without one.
   */
  readonly observer?: RunObserver;
  /** The W3C trace context stored with the run (`RunRecord.traceContext`); absent without one. */
  readonly traceContext?: TraceContext;
  /** The id of the session the step starts from (the run's last checkpoint). */
  readonly sessionId?: string;
  /** When the run was submitted (epoch ms). */
  readonly submittedAt?: number;
}

/**
 * An extension of step execution (the seam the journal, effect ledger and interrupts plug into):
 * called around every step attempt. `around` must call `next` once, with the context it wants the
 * step to see (it may add `extensions` or replace `interrupt`), and return its result.
 */
export interface StepMiddleware {
  readonly name: string;
  around<T>(context: StepContext, next: (context: StepContext) => Promise<T>): Promise<T>;
  /**
   * Told, after the write, of every run this worker ended (succeeded, failed, timed out), with its
   * final record: where a tracing middleware records the run's span. Errors are ignored.
   */
  ended?(run: RunRecord): void;
}
