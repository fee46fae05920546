import type { Session } from "@openrath/core";
import type { StepContext } from "../contract/step-context.js";

/** A step: gets the run's Session and a context, returns the next Session. */
export type StepHandler = (session: Session, context: StepContext) => Promise<Session> | Session;

/** A router: gets the Session and returns the id of one of its declared successors. */
export type RouterHandler = (session: Session, context: StepContext) => Promise<string> | string;

/** Backoff of a step's retries: attempt n waits min(maxMs, baseMs × 2^(n−1)). */
export interface RetryPolicy {
  /** Attempts in all, the first included (≥ 1, default 1: no retry). */
  readonly maxAttempts?: number;
  /** First delay in milliseconds (default 250). */
  readonly baseMs?: number;
  /** Longest delay in milliseconds (default 30 000). */
  readonly maxMs?: number;
}

/**
 * A step that runs in an isolated executor (a worker thread) and is stopped when its timeout
 * passes, even if it ignores its signal. The module's export is called with the session's JSON
 * and a plain context, and returns a Session or its JSON.
 */
export interface IsolatedStep {
  /** The module to load in the thread: a file URL or an absolute path (plain JavaScript). */
  readonly module: URL | string;
  /** The export to call (default `"default"`). */
  readonly export?: string;
}

/** Options of a step. */
export interface StepOptions {
  /** This is the plan's one entry step. */
  readonly entry?: boolean;
  /** The step that follows (a step has at most one successor; branch with a router). */
  readonly next?: string;
  readonly retry?: RetryPolicy;
  /**
   * Milliseconds the step may run. In-process steps see it folded into their signal; an
   * `isolated` step is stopped when it passes.
   */
  readonly timeoutMs?: number;
  /** Run the step in a worker thread that is terminated at `timeoutMs`. */
  readonly isolated?: IsolatedStep;
}

/** Options of a router. */
export interface RouterOptions {
  readonly entry?: boolean;
  /** The successors the router may return (at least one). */
  readonly successors: readonly string[];
}

/** One node of a definition before compilation. */
export type NodeDeclaration =
  | {
      readonly kind: "step";
      readonly id: string;
      readonly handler: StepHandler;
      readonly options: StepOptions;
    }
  | {
      readonly kind: "router";
      readonly id: string;
      readonly handler: RouterHandler;
      readonly options: RouterOptions;
    };

/** A workflow definition in either form, before compilation. */
export interface WorkflowDefinition {
  readonly name: string;
  readonly version: string;
  readonly nodes: readonly NodeDeclaration[];
}
