import type { ModelCall, ToolDispatch } from "./agent-options.js";
import type { ProviderV1 } from "./provider.js";
import type { Session } from "./session.js";

/** The trace and span a piece of work was recorded under (W3C ids, lower-case hex). */
export interface TraceLink {
  /** 32 hex characters. */
  readonly traceId: string;
  /** 16 hex characters. */
  readonly spanId: string;
}

/**
 * One piece of a run's work an observer sees, by kind. The session is the one the work starts
 * from (its id and lineage node name the branch).
 */
export type ObservedWork =
  | {
      readonly kind: "agent";
      readonly name: string;
      /** Workflow path and name, such as `"mams/coder"`. */
      readonly path: string;
      readonly session: Session;
    }
  | { readonly kind: "workflow"; readonly name: string; readonly path: string; readonly session: Session }
  | {
      readonly kind: "model";
      /** What kind of step calls: `Agent`, `Selector` or `Compressor`. */
      readonly step: string;
      readonly call: ModelCall;
      readonly provider: ProviderV1;
      readonly session: Session;
    }
  | { readonly kind: "tool"; readonly dispatch: ToolDispatch; readonly session: Session }
  | {
      readonly kind: "sandbox.exec";
      /** The command as the tool passed it (argv, or a shell string). */
      readonly command: string | readonly string[];
      /** `exec` or `runCode`. */
      readonly method: "exec" | "runCode";
      readonly sandboxId: string;
      readonly session: Session;
    }
  | {
      readonly kind: "memory.recall";
      readonly agent: string;
      readonly query: string;
      readonly session: Session;
    }
  | { readonly kind: "memory.commit"; readonly agent: string; readonly session: Session }
  | {
      readonly kind: "select";
      readonly selector: string;
      readonly candidates: readonly string[];
      readonly session: Session;
    };

/** Facts an observer records on a piece of work (attribute-like: strings, numbers, booleans). */
export type ObservedFacts = Readonly<Record<string, string | number | boolean>>;

/**
 * The observer's handle on one piece of work while it runs. Hooks that learn something about the
 * work add it with `note`: a durable journal that answers a model or tool call from its record
 * notes `{ replayed: "journal" }` (and the call then reaches no provider or tool).
 */
export interface ObservedSpan {
  /** The trace and span this work is recorded under, or `undefined` when nothing is recorded. */
  readonly link: TraceLink | undefined;
  /** Adds facts to the work's record (later values replace earlier ones of the same name). */
  note(facts: ObservedFacts): void;
}

/**
 * Sees every agent loop, workflow, model call, tool call, sandbox command, memory recall and
 * commit and selector choice of a run, around the work (`RunOptions.observer`, passed on to child
 * runs like `calls`). `observe` must call `run` once and return what it returns (or throw what it
 * throws); it sees the result: the output `Session` of an `agent` or `workflow`, the
 * `ProviderResponse` of a `model` call, the `ToolOutcome` of a `tool` call, the `ExecResult` of a
 * `sandbox.exec`, the hits of a `memory.recall`, the `Route` of a `select`. Core imports no
 * tracing library: `@openrath/otel` implements this with OpenTelemetry.
 */
export interface RunObserver {
  observe<T>(work: ObservedWork, run: (span: ObservedSpan) => Promise<T>): Promise<T>;
}

/** A fork or merge, as {@link setBranchListener}'s listener sees it. */
export interface BranchEvent {
  readonly op: "fork" | "merge";
  /** The new session. */
  readonly session: Session;
  /** The session forked, or the two merged (`[self, other]`). */
  readonly from: readonly Session[];
}

let branchListener: ((event: BranchEvent) => void) | undefined;

/**
 * Installs the process-wide listener of every `Session.fork` and `Session.merge` (synchronous
 * operations with no run options to carry an observer), or removes it with `undefined`. One
 * listener at a time; returns the one it replaces. A listener that throws is ignored.
 */
export function setBranchListener(
  listener: ((event: BranchEvent) => void) | undefined,
): ((event: BranchEvent) => void) | undefined {
  const before = branchListener;
  branchListener = listener;
  return before;
}

/** Tells the branch listener, if any, of a fork or merge. */
export function reportBranch(op: "fork" | "merge", session: Session, from: readonly Session[]): void {
  if (branchListener === undefined) return;
  try {
    branchListener({ op, session, from });
  } catch {
    // An observer's failure must never break the session operation it watches.
  }
}

/** Runs `run` as `work` under the observer, or plainly without one. */
export function observed<T>(
  observer: RunObserver | undefined,
  work: ObservedWork,
  run: (span: ObservedSpan | undefined) => Promise<T>,
): Promise<T> {
  return observer ? observer.observe(work, run) : run(undefined);
}

/** Lineage extras that hold the trace and span of the work that made a session (see `LineageNode.trace`). */
export const TRACE_EXTRA = "trace.id";
/** See {@link TRACE_EXTRA}. */
export const SPAN_EXTRA = "trace.span_id";

/** The lineage extras of a trace link (none without one). */
export function traceExtras(link: TraceLink | undefined): Record<string, string> {
  return link ? { [TRACE_EXTRA]: link.traceId, [SPAN_EXTRA]: link.spanId } : {};
}
