import {
  type AgentMemory,
  type AgentMemoryOptions,
  MemoryHandle,
  noMemory,
  recallQuery,
  withCommit,
  withRecall,
} from "./agent-memory.js";
import { type Budget, BudgetExceededError, type BudgetLimits, exceededBy } from "./budget.js";
import { SANDBOX_TOOLS } from "./builtin-tools.js";
import {
  type AssistantChunk,
  type Chunk,
  type ChunkInput,
  chunkToMessage,
  type Message,
  type ToolCall,
} from "./chunk.js";
import { OpenRathError } from "./errors.js";
import { AsyncQueue } from "./internal/async-queue.js";
import { hashString } from "./internal/hash.js";
import type { JsonValue } from "./json.js";
import type { MemoryEntry, MemoryHit, MemoryInput, RecallOptions } from "./memory.js";
import {
  callProvider,
  type ProviderRequest,
  type ProviderResponse,
  type ProviderV1,
  type RetryPolicy,
  streamProvider,
} from "./provider.js";
import type { Registry } from "./registry.js";
import type { Session } from "./session.js";
import { parseToolArguments, projectToolResult, type Tool, toolErrorContent, toolSpecs } from "./tool.js";
import { checkToolPolicy, type ToolPolicy, toolPolicyDenial } from "./tool-policy.js";
import { usageReport } from "./usage.js";

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
  /** Limits checked before each call against the session's usage (which a fork inherits). */
  readonly budget?: BudgetLimits;
  readonly request?: AgentRequestOptions;
  readonly retry?: RetryPolicy;
  /** What the agent is for, shown to selectors choosing among workflows. */
  readonly description?: string;
  /** Whether `run()` streams from the provider too (default false; `stream()` always does). */
  readonly streaming?: boolean;
  /**
   * Persistent memory: a registry key (`"bm25"`; `"local"` means `"bm25"`), `{ key, spec }`, or an
   * open store. Recalled before each run (as untrusted user chunks plus a `memory.recall` event) and
   * committed after it (a `memory.commit` event), both as `memory` nodes in the lineage.
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

/** Options of one run of an agent or workflow. */
export interface RunOptions {
  /** Aborts the run: the provider call or tool in flight is cancelled. */
  readonly signal?: AbortSignal;
  /** A budget shared by every agent in the run, across forks. */
  readonly budget?: Budget;
  /** Workflow path of the caller, prefixed to the agent's name in chunk authors (`"mams/coder"`). */
  readonly path?: string;
  /** Receives the run's events (what `stream()` yields), for workflows streaming their children. */
  readonly onEvent?: (event: RunEvent) => void;
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

/** The hash of one message, as {@link requestFingerprint} folds it in. */
export function messageHash(message: Message): string {
  return hashString(JSON.stringify(message));
}

/**
 * The fingerprint of a request: what `ReplayProvider` matches a recorded turn by. Built from a
 * hash per message (so an agent hashes each message once, not the whole transcript every turn)
 * and the model, tools, tool choice and response format. Pass `messageHashes` when they are known.
 */
export function requestFingerprint(request: ProviderRequest, messageHashes?: readonly string[]): string {
  return hashString(
    JSON.stringify([
      request.model ?? null,
      messageHashes ?? request.messages.map(messageHash),
      request.tools ? hashString(JSON.stringify(request.tools)) : null,
      request.toolChoice ?? null,
      request.responseFormat ?? null,
    ]),
  );
}

/** Each chunk's message and its hash, computed once per chunk (chunks are immutable). */
const projected = new WeakMap<Chunk, { message: Message; hash: string } | null>();

function project(chunk: Chunk): { message: Message; hash: string } | null {
  let p = projected.get(chunk);
  if (p === undefined) {
    const message = chunkToMessage(chunk);
    p = message ? { message, hash: messageHash(message) } : null;
    projected.set(chunk, p);
  }
  return p;
}

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
    const entries = await (await handle.store()).commit(session, { scope });
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

  /** Runs the agent on `session` and returns the new session. */
  run(session: Session, options: RunOptions = {}): Promise<Session> {
    return this.runAndReport(session, options, this.options.streaming ?? false);
  }

  private async runWithMemory(session: Session, options: RunOptions, streaming: boolean): Promise<Session> {
    const handle = this.memoryHandle;
    if (!handle) return runLoop(this, this.options, session, options, streaming);
    const author = options.path ? `${options.path}/${this.name}` : this.name;
    let input = session;
    const recall = this.options.recall ?? { topK: 4 };
    const query = recall === false ? undefined : recallQuery(session);
    if (recall !== false && query !== undefined) {
      const scope = handle.scopeFor(session);
      const hits = await (await handle.store()).recall(query, {
        scope,
        topK: recall.topK ?? 4,
        ...(recall.minScore !== undefined ? { minScore: recall.minScore } : {}),
      });
      input = withRecall(session, this.name, author, query, scope, hits);
    }
    const out = await runLoop(this, this.options, input, options, streaming);
    return (this.options.commit ?? "after-run") === "after-run" ? this.commit(out, options) : out;
  }

  private async runAndReport(session: Session, options: RunOptions, streaming: boolean): Promise<Session> {
    const out = await this.runWithMemory(session, options, streaming);
    options.onEvent?.({
      type: "produced",
      by: this.name,
      path: options.path ? `${options.path}/${this.name}` : this.name,
      session: out,
    });
    return out;
  }

  /** Runs the agent, yielding text and tool-call deltas and tool events, then `{ type: "session" }`. */
  stream(session: Session, options: RunOptions = {}): AsyncIterable<AgentEvent> {
    const queue = new AsyncQueue<AgentEvent>();
    // An agent's own loop only emits agent events.
    const onEvent = (event: RunEvent) => {
      if (event.type === "workflow_start" || event.type === "workflow_end" || event.type === "produced")
        return;
      options.onEvent?.(event);
      queue.push(event);
    };
    this.runAndReport(session, { ...options, onEvent }, true).then(
      (out) => {
        queue.push({ type: "session", session: out });
        queue.end();
      },
      (error) => queue.fail(error),
    );
    return queue;
  }
}

async function runLoop(
  agent: Agent,
  config: AgentOptions,
  input: Session,
  run: RunOptions,
  streaming: boolean,
): Promise<Session> {
  const author = run.path ? `${run.path}/${agent.name}` : agent.name;
  const emit = run.onEvent ?? (() => {});
  const signal = run.signal ?? new AbortController().signal;
  const placed = input.placement !== undefined;
  // Tools that need a sandbox (the built-ins, or a user tool that says so) are offered only to a placed session.
  const tools = placed ? [...agent.tools, ...SANDBOX_TOOLS] : agent.tools.filter((t) => !t.needsSandbox);
  const byName = new Map(tools.map((t) => [t.name, t]));
  const specs = toolSpecs(tools);
  const head: Message[] = agent.instructions ? [{ role: "system", content: agent.instructions }] : [];
  const headHashes = head.map(messageHash);
  let out = input.derive({ op: "loop", operator: agent.name });
  let calls = 0;
  let finished = false;

  const fail = (error: unknown, what: string): never => {
    const aborted = signal.aborted || OpenRathError.isInstance(error, "aborted");
    out = out.append({
      kind: "event",
      name: "agent.error",
      author,
      data: {
        agent: agent.name,
        code: OpenRathError.isInstance(error) ? error.code : "error",
        message: String((error as Error)?.message ?? error),
      },
    });
    throw new AgentRunError(
      aborted ? "aborted" : "agent_failed",
      aborted
        ? `Agent "${agent.name}" was aborted ${what}.`
        : `Agent "${agent.name}" failed ${what}: ${(error as Error)?.message ?? error}`,
      out,
      error,
    );
  };

  for (let turn = 1; turn <= agent.maxTurns; turn++) {
    if (signal.aborted) fail(signal.reason, `before turn ${turn}`);
    const overBudget =
      (config.budget && exceededBy(config.budget, out.usage, costOfSession(out, config.budget))) ??
      run.budget?.exceeded();
    if (overBudget) {
      out = out.append({
        kind: "event",
        name: "budget.exceeded",
        author,
        data: { agent: agent.name, reason: overBudget, turn },
      });
      throw new BudgetExceededError(
        `Agent "${agent.name}" stopped before turn ${turn}: ${overBudget}.`,
        out,
        { reason: overBudget },
      );
    }
    emit({ type: "turn_start", agent: agent.name, turn });
    const messages: Message[] = [...head];
    const hashes: string[] = [...headHashes];
    for (const chunk of out.chunks) {
      const p = project(chunk);
      if (!p) continue;
      // A copy per request: a provider may not rely on (or change) our cached objects.
      messages.push({ ...p.message });
      hashes.push(p.hash);
    }
    const request: ProviderRequest = {
      ...config.request,
      messages,
      ...(specs.length > 0 ? { tools: specs } : {}),
    };
    let response: ProviderResponse;
    try {
      response = streaming
        ? await streamTurn(agent, config, request, run, signal, emit)
        : await callProvider(agent.provider, request, providerOptions(config, signal));
    } catch (error) {
      return fail(error, `calling the model on turn ${turn}`);
    }
    run.budget?.charge(response.usage, response.model);
    out = out.append({
      kind: "assistant",
      author,
      content: response.content,
      ...(response.toolCalls.length > 0 ? { toolCalls: response.toolCalls } : {}),
      ...(response.usage ? { usage: response.usage } : {}),
      model: response.model,
      finishReason: response.finishReason,
      requestHash: requestFingerprint(request, hashes),
    } as ChunkInput);
    emit({ type: "assistant", agent: agent.name, chunk: out.at(-1) as AssistantChunk });
    if (response.toolCalls.length === 0) {
      finished = true;
      break;
    }
    const results = await dispatch(response.toolCalls, {
      agent,
      author,
      byName,
      session: out,
      signal,
      emit,
      policy: config.toolPolicy,
      calls: () => calls,
      spend: () => calls++,
    });
    out = out.append(...results);
    if (signal.aborted) fail(signal.reason, `while running tools on turn ${turn}`);
  }
  if (!finished) {
    out = out.append({
      kind: "event",
      name: "loop.max_turns",
      author,
      data: { agent: agent.name, maxTurns: agent.maxTurns },
    });
    out = out.annotate({ "loop.truncated": true, "loop.max_turns": agent.maxTurns });
  }
  return out;
}

function providerOptions(config: AgentOptions, signal: AbortSignal) {
  return { signal, ...(config.retry ? { retry: config.retry } : {}) };
}

function costOfSession(session: Session, limits: BudgetLimits): number {
  if (!limits.prices || limits.maxCostUsd === undefined) return 0;
  return usageReport(session.chunks, { prices: limits.prices }).cost ?? 0;
}

async function streamTurn(
  agent: Agent,
  config: AgentOptions,
  request: ProviderRequest,
  run: RunOptions,
  signal: AbortSignal,
  emit: (e: AgentEvent) => void,
): Promise<ProviderResponse> {
  for await (const delta of streamProvider(agent.provider, request, providerOptions(config, signal))) {
    if (delta.type === "response") return delta.response;
    if (delta.type === "text") emit({ type: "text_delta", agent: agent.name, text: delta.text });
    else {
      emit({
        type: "tool_call_delta",
        agent: agent.name,
        index: delta.index,
        ...(delta.id !== undefined ? { id: delta.id } : {}),
        ...(delta.name !== undefined ? { name: delta.name } : {}),
        ...(delta.arguments !== undefined ? { arguments: delta.arguments } : {}),
      });
    }
  }
  void run;
  throw new OpenRathError(
    "provider_stream",
    `The "${agent.provider.name}" stream ended without a final response.`,
  );
}

interface DispatchContext {
  readonly agent: Agent;
  readonly author: string;
  readonly byName: ReadonlyMap<string, Tool<never>>;
  readonly session: Session;
  readonly signal: AbortSignal;
  readonly emit: (e: AgentEvent) => void;
  readonly policy: ToolPolicy | undefined;
  calls(): number;
  spend(): void;
}

type Prepared =
  | { ready: true; tool: Tool<never>; args: unknown; key: string }
  | { ready: false; content: string };

/** Runs one turn's tool calls in lanes and returns their result chunks in call order. */
async function dispatch(calls: readonly ToolCall[], ctx: DispatchContext): Promise<ChunkInput[]> {
  const prepared: Prepared[] = await Promise.all(calls.map((call) => prepare(call, ctx)));
  const results: { content: string; isError: boolean }[] = new Array(calls.length);
  const lanes = new Map<string, Promise<void>>();
  const tasks: Promise<void>[] = [];
  prepared.forEach((p, i) => {
    const call = calls[i]!;
    if (!p.ready) {
      results[i] = { content: p.content, isError: true };
      return;
    }
    const task = (lanes.get(p.key) ?? Promise.resolve()).then(async () => {
      results[i] = await execute(call, p, ctx);
    });
    lanes.set(p.key, task);
    tasks.push(task);
  });
  await Promise.all(tasks);
  return calls.map((call, i) => {
    const r = results[i] ?? {
      content: toolErrorContent("internal_missing_result", "The tool produced no result."),
      isError: true,
    };
    return {
      kind: "tool_result",
      author: ctx.author,
      toolCallId: call.id,
      name: call.function.name,
      content: r.content,
      ...(r.isError ? { isError: true } : {}),
    };
  });
}

async function prepare(call: ToolCall, ctx: DispatchContext): Promise<Prepared> {
  const name = call.function.name;
  const parsed = parseToolArguments(call.function.arguments);
  if (!parsed.ok) {
    return {
      ready: false,
      content: toolErrorContent(
        "invalid_tool_arguments",
        parsed.message,
        call.function.arguments.slice(0, 2000),
      ),
    };
  }
  const tool = ctx.byName.get(name);
  if (!tool) {
    const known = [...ctx.byName.keys()].sort().join(", ") || "(none)";
    return {
      ready: false,
      content: toolErrorContent(
        "unknown_tool",
        `There is no tool named "${name}". Available tools: ${known}.`,
      ),
    };
  }
  const checked = await tool.validate(parsed.value);
  if (!checked.ok) {
    return {
      ready: false,
      content: toolErrorContent(
        "invalid_tool_arguments",
        `Arguments for "${name}" do not match its schema: ${checked.problems.join("; ")}`,
        call.function.arguments.slice(0, 2000),
      ),
    };
  }
  try {
    return { ready: true, tool, args: checked.value, key: tool.resourceKey(checked.value as never) };
  } catch (error) {
    return {
      ready: false,
      content: toolErrorContent(
        "tool_execution_exception",
        `${(error as Error)?.name ?? "Error"}: ${(error as Error)?.message ?? error}`,
      ),
    };
  }
}

async function execute(
  call: ToolCall,
  p: Extract<Prepared, { ready: true }>,
  ctx: DispatchContext,
): Promise<{ content: string; isError: boolean }> {
  const name = p.tool.name;
  if (ctx.policy) {
    const denial = toolPolicyDenial(ctx.policy, name, p.args, ctx.calls());
    if (denial)
      return {
        content: toolErrorContent("tool_policy_denied", `Tool policy denied "${name}": ${denial}.`),
        isError: true,
      };
    ctx.spend();
  }
  ctx.emit({
    type: "tool_start",
    agent: ctx.agent.name,
    callId: call.id,
    name,
    arguments: call.function.arguments,
  });
  let result: { content: string; isError: boolean };
  try {
    const value = await p.tool.execute(p.args as never, {
      session: ctx.session,
      agent: ctx.agent.name,
      callId: call.id,
      signal: ctx.signal,
      sandbox: () => ctx.session.sandbox({ signal: ctx.signal }),
      emit: (data) => ctx.emit({ type: "tool_progress", agent: ctx.agent.name, callId: call.id, name, data }),
    });
    result = { content: projectToolResult(value, p.tool.maxResultChars), isError: false };
  } catch (error) {
    if (OpenRathError.isInstance(error)) {
      // A coded error already says what failed; its details (JSON-safe ones) help the model more than a class name.
      let detail: string | undefined;
      try {
        detail = Object.keys(error.details).length > 0 ? JSON.stringify(error.details) : undefined;
      } catch {
        detail = undefined;
      }
      result = { content: toolErrorContent(error.code, error.message, detail), isError: true };
    } else {
      const message = `${(error as Error)?.name ?? "Error"}: ${(error as Error)?.message ?? String(error)}`;
      result = {
        content: toolErrorContent("tool_execution_exception", message, (error as Error)?.name),
        isError: true,
      };
    }
  }
  ctx.emit({
    type: "tool_end",
    agent: ctx.agent.name,
    callId: call.id,
    name,
    content: result.content,
    isError: result.isError,
  });
  return result;
}

function throwError(error: Error): never {
  throw error;
}
