import type { AgentMemory, AgentMemoryOptions } from "./agent-memory.js";
import type { Budget, BudgetLimits } from "./budget.js";
import type { CallPolicy } from "./call-policy.js";
import type { CallPosition, RunScope } from "./call-position.js";
import type { AssistantChunk, ToolCall } from "./chunk.js";
import { OpenRathError } from "./errors.js";
import type { JsonValue } from "./json.js";
import type { ObservedSpan, RunObserver } from "./observer.js";
import type { ProviderRequest, ProviderResponse, ProviderV1, RetryPolicy } from "./provider.js";
import type { Registry } from "./registry.js";
import type { SecretProviderV1 } from "./secret.js";
import type { Session } from "./session.js";
import type { Tool, ToolContext } from "./tool.js";
import type { ToolPolicy } from "./tool-policy.js";

/** Request fields an agent sends with every call (sampling, tool choice, structured output…). */
export type AgentRequestOptions = Omit<ProviderRequest, "messages" | "tools">;

/** Options of {@link Agent}. */
export interface AgentOptions {
  /** Name recorded as the author of its chunks and as the lineage operator. */
  readonly name: string;
  /** The head sent before the transcript on every request; never copied into the output. */
  readonly instructions?: string;
  readonly provider: ProviderV1;
  readonly tools?: readonly Tool<never>[];
  /** Most model calls in one run (default 32). Hitting it is recorded, not thrown. */
  readonly maxTurns?: number;
  readonly toolPolicy?: ToolPolicy;
  /**
   * Rules that may refuse this agent's model and tool calls before they are made, seeing the
   * trust labels of the session so far (see {@link CallPolicy}); checked after the run's own
   * `RunOptions.policy`.
   */
  readonly policy?: CallPolicy;
  /**
   * Limits on one run of this agent, counting only what the run's own model calls spend (not the
   * usage its input inherited). A cost limit needs `prices`.
   */
  readonly budget?: BudgetLimits;
  readonly request?: AgentRequestOptions;
  readonly retry?: RetryPolicy;
  /** What the agent is for, shown to selectors choosing among workflows. */
  readonly description?: string;
  /** Whether `run()` streams from the provider too (default false; `stream()` always does). */
  readonly streaming?: boolean;
  /**
   * Persistent memory: a registry key (`"bm25"`), `{ key, spec }`, or an open store. Recalled
   * before each run (as untrusted user chunks plus a `memory.recall` event) and committed after
   * it (a `memory.commit` event), both as `memory` nodes in the lineage.
   */
  readonly memory?: AgentMemory;
  /** Tenant, user and agent levels of the agent's memories (the session level follows the session). */
  readonly memoryScope?: AgentMemoryOptions["memoryScope"];
  /** Recall settings (default `{ topK: 4 }`), or `false` for none. */
  readonly recall?: AgentMemoryOptions["recall"];
  /** Commit after each run (default) or only through `agent.commit(session)`. */
  readonly commit?: AgentMemoryOptions["commit"];
  /** Where commits store entries (default the agent level, kept across conversations). */
  readonly commitLevel?: AgentMemoryOptions["commitLevel"];
  /** Registry resolving memory keys (default: the process-wide one). */
  readonly registry?: Registry;
}

/** A model call as the run makes it, for {@link CallHooks.model}. */
export interface ModelCall {
  /** Name of the step calling (an agent, selector or compressor). */
  readonly by: string;
  /** Where the call sits: its branch and number on it. */
  readonly position: CallPosition;
  readonly request: ProviderRequest;
  /** The request's fingerprint (what a replay matches). */
  readonly fingerprint: string;
  /** Whether the call streams deltas to the run's events. */
  readonly streaming: boolean;
  /**
   * The run observer's record of this call, when the run has an observer: a hook that answers the
   * call without `next()` (from a journal) notes it there (`{ replayed: "journal" }`).
   */
  readonly observed?: ObservedSpan;
}

/** A tool call as the run dispatches it, for {@link CallHooks.tool}. */
export interface ToolDispatch {
  /** Name of the agent calling. */
  readonly by: string;
  /** The branch and the model call whose reply asked for the tool. */
  readonly position: CallPosition;
  /** The call's place among that reply's tool calls (0-based). */
  readonly order: number;
  readonly call: ToolCall;
  /** The session as of the turn that called the tool. */
  readonly session: Session;
  /** The tool being called (its effect class, idempotency key and approval rule). */
  readonly tool: Tool<never>;
  /** The validated arguments. */
  readonly args: unknown;
  /**
   * Whether the tool's `needsApproval` asks for a human's approval of this call. Only a hook with
   * `approvals: true` sees `true` (without one such calls are refused before the hook).
   */
  readonly needsApproval: boolean;
  /** The run observer's record of this call, when the run has an observer (see {@link ModelCall.observed}). */
  readonly observed?: ObservedSpan;
}

/**
 * What a `calls.tool` hook may change when it runs the tool: other arguments (an approved edit,
 * already validated against the tool's schema), and fields added to the tool's context (the call's
 * idempotency key, an `interrupt` function, extensions).
 */
export interface ToolRunOverride {
  readonly args?: unknown;
  readonly context?: Pick<ToolContext, "idempotencyKey" | "interrupt" | "extensions">;
}

/** What a tool call comes back as: the JSON text that enters the transcript. */
export interface ToolOutcome {
  readonly content: string;
  readonly isError: boolean;
}

/**
 * The seam every model call and tool call of a run goes through: wrap `next()` to observe, journal
 * or answer calls (a durable runtime journals each call by position and fingerprint and answers a
 * resumed step from the journal without calling `next`). Budgets are checked before `model` and
 * charged with what it returns; tool policy and argument checks run before `tool`.
 */
export interface CallHooks {
  /** Around each model call; `next()` makes it (with retries, streaming deltas when streaming). */
  model?(call: ModelCall, next: () => Promise<ProviderResponse>): Promise<ProviderResponse>;
  /**
   * Around each tool call that passed validation and policy; `next()` runs the tool (with
   * `override`, on other arguments or with more context).
   */
  tool?(
    dispatch: ToolDispatch,
    next: (override?: ToolRunOverride) => Promise<ToolOutcome>,
  ): Promise<ToolOutcome>;
  /**
   * The `tool` hook asks a human to approve the calls whose tool `needsApproval` (a durable
   * journal does). Without it such calls are refused with an `approval_required` result.
   */
  readonly approvals?: boolean;
}

/** Options of one run of an agent or workflow. Pass them on to child runs. */
export interface RunOptions {
  /** Aborts the run: the provider call or tool in flight is cancelled (or abandoned, if it ignores the signal). */
  readonly signal?: AbortSignal;
  /** A budget shared by every agent in the run, across forks. */
  readonly budget?: Budget;
  /** Workflow path of the caller, prefixed to the agent's name in chunk authors (`"mams/coder"`). */
  readonly path?: string;
  /** Receives the run's events (what `stream()` yields), for workflows streaming their children. */
  readonly onEvent?: (event: RunEvent) => void;
  /** Wraps every model and tool call of the run (journals, tracing, tests). */
  readonly calls?: CallHooks;
  /**
   * Sees every agent loop, workflow, model and tool call, sandbox command, memory recall and
   * commit and selector choice of the run, around the work (tracing; see {@link RunObserver}).
   * Outside `calls`: a call a journal answers is still observed, and noted as replayed.
   */
  readonly observer?: RunObserver;
  /**
   * Rules that may refuse any model or tool call of the run before it is made (before `calls`);
   * see {@link CallPolicy}. A durable runtime's `policy` option arrives here for every step.
   */
  readonly policy?: CallPolicy;
  /**
   * Where tools' `ctx.secret(name)` reads secrets (default: the process-wide provider, see
   * `setSecretProvider`, which reads the environment unless replaced).
   */
  readonly secrets?: SecretProviderV1;
  /** The run's branch numbering; made by the outermost `run()`, shared by everything under it. */
  readonly scope?: RunScope;
}

/** What `agent.stream()` yields; the last event is always `session`. */
export type AgentEvent =
  | { readonly type: "turn_start"; readonly agent: string; readonly turn: number }
  | { readonly type: "text_delta"; readonly agent: string; readonly text: string }
  | {
      readonly type: "tool_call_delta";
      readonly agent: string;
      readonly index: number;
      readonly id?: string;
      readonly name?: string;
      readonly arguments?: string;
    }
  | { readonly type: "assistant"; readonly agent: string; readonly chunk: AssistantChunk }
  | {
      readonly type: "tool_start";
      readonly agent: string;
      readonly callId: string;
      readonly name: string;
      readonly arguments: string;
    }
  | {
      readonly type: "tool_progress";
      readonly agent: string;
      readonly callId: string;
      readonly name: string;
      readonly data: JsonValue;
    }
  | {
      readonly type: "tool_end";
      readonly agent: string;
      readonly callId: string;
      readonly name: string;
      /** The result as it enters the transcript (JSON text). */
      readonly content: string;
      readonly isError: boolean;
    }
  | { readonly type: "session"; readonly session: Session };

/**
 * Events of a run: an agent's events, start and end markers of each workflow around them, and a
 * `produced` event for every session a step hands back (agents, compressors, selectors,
 * workflows), which is how a recorder keeps every branch of a run.
 */
export type RunEvent =
  | AgentEvent
  | { readonly type: "workflow_start"; readonly workflow: string; readonly path: string }
  | {
      readonly type: "workflow_end";
      readonly workflow: string;
      readonly path: string;
      readonly sessionId: string;
    }
  | { readonly type: "produced"; readonly by: string; readonly path: string; readonly session: Session };

/**
 * Thrown (code `agent_failed` or `aborted`) when a run cannot finish: the provider failed after its
 * retries, or the run was aborted. `session` holds the transcript so far, ending with an
 * `agent.error` event chunk.
 */
export class AgentRunError extends OpenRathError {
  constructor(
    code: "agent_failed" | "aborted",
    message: string,
    /** The transcript up to the failure. */
    readonly session: Session,
    cause: unknown,
  ) {
    super(code, message, { cause });
  }
}
