import { runLoop } from "./agent-loop.js";
import { MemoryHandle, noMemory, recallQuery, withCommit, withRecall } from "./agent-memory.js";
import type { AgentEvent, AgentOptions, RunEvent, RunOptions } from "./agent-options.js";
import { checkBudgetLimits } from "./budget.js";
import { SANDBOX_TOOLS } from "./builtin-tools.js";
import { type Branch, withScope } from "./call-position.js";
import { OpenRathError } from "./errors.js";
import { streamRun } from "./internal/stream-run.js";
import type { MemoryEntry, MemoryHit, MemoryInput, RecallOptions } from "./memory.js";
import { observed, type TraceLink } from "./observer.js";
import type { ProviderV1 } from "./provider.js";
import type { Session } from "./session.js";
import type { Tool } from "./tool.js";
import { checkToolPolicy } from "./tool-policy.js";

/**
 * A model with instructions and tools, turning a session into a new session: `run` calls the
 * model, runs the tools it asks for, feeds the results back, and repeats until the model answers
 * without tools or `maxTurns` is reached.
 *
 * - The instructions are a head sent before the transcript on every request, never copied into
 *   the output. The output is a new session (lineage op `loop`, operator = the agent's name).
 * - Tool calls of one turn run in lanes by resource key (same key in call order, different keys at
 *   once); results are appended in call order. Invalid arguments, unknown tools, policy denials
 *   and thrown errors go back to the model as structured error results; the loop goes on.
 * - Built-in sandbox tools are offered only when the session is placed on a sandbox.
 * - Every model call and tool call goes through `RunOptions.calls` (see `CallHooks`).
 *
 * @example
 * ```ts
 * const agent = new Agent({ name: "helper", instructions: "Be brief.", provider, tools: [wordCount] });
 * const answered = await agent.run(Session.fromUserMessage("How many words in 'a b c'?"));
 * console.log(answered.text());
 * ```
 */
export class Agent {
  readonly name: string;
  readonly instructions: string | undefined;
  readonly provider: ProviderV1;
  readonly tools: readonly Tool<never>[];
  readonly maxTurns: number;
  readonly description: string;
  private readonly options: AgentOptions;
  private readonly memoryHandle: MemoryHandle | undefined;

  constructor(options: AgentOptions) {
    if (typeof options?.name !== "string" || options.name === "") {
      throw new OpenRathError("invalid_argument", "An Agent needs a non-empty name.");
    }
    if (!options.provider || typeof options.provider.complete !== "function") {
      throw new OpenRathError(
        "invalid_argument",
        `Agent "${options.name}" needs a provider (a ProviderV1, such as new ScriptedProvider([...])).`,
      );
    }
    const maxTurns = options.maxTurns ?? 32;
    if (!Number.isInteger(maxTurns) || maxTurns < 1) {
      throw new OpenRathError(
        "invalid_argument",
        `Agent "${options.name}": maxTurns must be a whole number >= 1, got ${maxTurns}.`,
      );
    }
    const names = new Set<string>();
    for (const tool of [...SANDBOX_TOOLS, ...(options.tools ?? [])]) {
      if (names.has(tool.name)) {
        const builtin = SANDBOX_TOOLS.some((t) => t.name === tool.name);
        throw new OpenRathError(
          "tool_name_conflict",
          `Agent "${options.name}": tool "${tool.name}" ${builtin ? "shadows a built-in sandbox tool" : "is listed twice"}; tool names must be unique.`,
          { details: { tool: tool.name } },
        );
      }
      names.add(tool.name);
    }
    if (options.toolPolicy) checkToolPolicy(options.toolPolicy);
    if (options.budget) checkBudgetLimits(options.budget, `Agent "${options.name}": budget`);
    this.name = options.name;
    this.instructions = options.instructions;
    this.provider = options.provider;
    this.tools = options.tools ?? [];
    this.maxTurns = maxTurns;
    this.description = options.description ?? "";
    this.options = options;
    this.memoryHandle = options.memory
      ? new MemoryHandle(options.name, {
          memory: options.memory,
          ...(options.memoryScope ? { memoryScope: options.memoryScope } : {}),
          ...(options.recall !== undefined ? { recall: options.recall } : {}),
          ...(options.commit ? { commit: options.commit } : {}),
          ...(options.commitLevel ? { commitLevel: options.commitLevel } : {}),
          ...(options.registry ? { registry: options.registry } : {}),
        })
      : undefined;
  }

  /** Runs the agent on `session` and returns the new session. */
  run(session: Session, options: RunOptions = {}): Promise<Session> {
    return this.start(session, options, this.options.streaming ?? false);
  }

  /**
   * Runs the agent, yielding text and tool-call deltas and tool events, then `{ type: "session" }`.
   * Leaving the loop early (`break`, `return`, a throw) aborts the run: no further model or tool calls.
   */
  stream(session: Session, options: RunOptions = {}): AsyncIterable<AgentEvent> {
    return streamRun(options, (run) => this.start(session, run, true), isAgentEvent);
  }

  /** Numbers the run's branch now (before any await, so sibling runs are numbered in call order), then runs. */
  private start(session: Session, options: RunOptions, streaming: boolean): Promise<Session> {
    const run = withScope(options);
    const branch = run.scope.child(run.scope.branchOf(session.lineage), "loop", this.name);
    return this.runAndReport(session, run, streaming, branch);
  }

  /** Stores entries in the agent's memory (default scope: the agent's user level). */
  async remember(entries: string | MemoryInput | readonly MemoryInput[]): Promise<MemoryEntry[]> {
    const handle = this.memoryHandle ?? throwError(noMemory(this.name));
    const s = this.options.memoryScope ?? {};
    const scope = { tenant: s.tenant ?? "default", user: s.user ?? "default" };
    const list = (
      typeof entries === "string" ? [{ text: entries }] : Array.isArray(entries) ? entries : [entries]
    ) as MemoryInput[];
    return (await handle.store()).remember(list.map((e) => ({ ...e, scope: e.scope ?? scope })));
  }

  /**
   * Recalls from the agent's memory as a run on `session` would; without a session, at the agent
   * level, which sees what `remember` stored (the user level) and what runs committed.
   */
  async recall(query: string, options: RecallOptions & { session?: Session } = {}): Promise<MemoryHit[]> {
    const handle = this.memoryHandle ?? throwError(noMemory(this.name));
    const { session, ...rest } = options;
    const scope = rest.scope ?? (session ? handle.scopeFor(session) : handle.agentScope());
    return (await handle.store()).recall(query, { ...rest, ...(scope ? { scope } : {}) });
  }

  /**
   * Commits `session` to the agent's memory and returns the session with the commit recorded
   * (lineage op `memory` and a `memory.commit` event listing the ids written).
   */
  async commit(session: Session, options: RunOptions = {}): Promise<Session> {
    const handle = this.memoryHandle ?? throwError(noMemory(this.name));
    const scope = handle.commitScopeFor(session);
    const entries = await observed(
      options.observer,
      { kind: "memory.commit", agent: this.name, session },
      async () => (await handle.store()).commit(session, { scope }),
    );
    return withCommit(
      session,
      this.name,
      options.path ? `${options.path}/${this.name}` : this.name,
      scope,
      entries,
    );
  }

  /** Closes the memory store this agent opened from a key (a store passed in stays open). */
  close(): Promise<void> {
    return this.memoryHandle?.close() ?? Promise.resolve();
  }

  private async runWithMemory(
    session: Session,
    options: RunOptions,
    streaming: boolean,
    branch: Branch,
    link: TraceLink | undefined,
  ): Promise<Session> {
    const handle = this.memoryHandle;
    if (!handle) return runLoop(this, this.options, session, options, streaming, branch, link);
    const author = options.path ? `${options.path}/${this.name}` : this.name;
    let input = session;
    const recall = this.options.recall ?? { topK: 4 };
    const query = recall === false ? undefined : recallQuery(session);
    if (recall !== false && query !== undefined) {
      const scope = handle.scopeFor(session);
      const hits = await observed(
        options.observer,
        { kind: "memory.recall", agent: this.name, query, session },
        async () =>
          (await handle.store()).recall(query, {
            scope,
            topK: recall.topK ?? 4,
            ...(recall.minScore !== undefined ? { minScore: recall.minScore } : {}),
          }),
      );
      input = withRecall(session, this.name, author, query, scope, hits);
    }
    const out = await runLoop(this, this.options, input, options, streaming, branch, link);
    return (this.options.commit ?? "after-run") === "after-run" ? this.commit(out, options) : out;
  }

  private async runAndReport(
    session: Session,
    options: RunOptions,
    streaming: boolean,
    branch: Branch,
  ): Promise<Session> {
    const path = options.path ? `${options.path}/${this.name}` : this.name;
    const out = await observed(options.observer, { kind: "agent", name: this.name, path, session }, (span) =>
      this.runWithMemory(session, options, streaming, branch, span?.link),
    );
    options.onEvent?.({
      type: "produced",
      by: this.name,
      path: options.path ? `${options.path}/${this.name}` : this.name,
      session: out,
    });
    return out;
  }
}

function throwError(error: Error): never {
  throw error;
}

/** Whether `event` is one of an agent's own (an agent's loop drops workflow markers and `produced`). */
function isAgentEvent(event: RunEvent): event is AgentEvent {
  return event.type !== "workflow_start" && event.type !== "workflow_end" && event.type !== "produced";
}
