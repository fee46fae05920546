import type { AgentEvent, CallHooks, ToolDispatch, ToolOutcome, ToolRunOverride } from "./agent-options.js";
import { type CallPolicy, judge, type PolicyToolCall } from "./call-policy.js";
import type { CallPosition } from "./call-position.js";
import type { ChunkInput, ToolCall } from "./chunk.js";
import { OpenRathError } from "./errors.js";
import { raceAbort } from "./internal/abort.js";
import { observedSandbox } from "./observed-sandbox.js";
import type { RunObserver } from "./observer.js";
import { redactSecrets, resolveSecret, type SecretProviderV1, secret } from "./secret.js";
import type { Session } from "./session.js";
import { parseToolArguments, projectToolResult, type Tool, toolErrorContent } from "./tool.js";
import { type ToolPolicy, toolPolicyDenial } from "./tool-policy.js";

/** What one turn's tool dispatch needs from its run. */
export interface DispatchContext {
  readonly agent: string;
  readonly author: string;
  readonly byName: ReadonlyMap<string, Tool<never>>;
  /** The session as of the turn that called the tools. */
  readonly session: Session;
  readonly signal: AbortSignal;
  readonly emit: (event: AgentEvent) => void;
  readonly policy: ToolPolicy | undefined;
  /** The run's and the agent's call policies, asked before each call runs. */
  readonly callPolicies?: readonly (CallPolicy | undefined)[] | undefined;
  /** Where `ctx.secret(name)` reads (default: the process-wide secret provider). */
  readonly secrets?: SecretProviderV1 | undefined;
  /** Tool calls the policy admitted so far in the session (its `maxCalls` counts these). */
  readonly admitted: { count: number };
  readonly hooks: CallHooks | undefined;
  /** The run's observer: sees each tool call and the sandbox commands the tools run. */
  readonly observer?: RunObserver | undefined;
  /** The branch and model call whose reply asked for these tools. */
  readonly position: CallPosition;
  /** The signal running tools are raced against (none when nothing can abort the run). */
  readonly race: AbortSignal | undefined;
}

type Prepared =
  | { readonly ready: true; readonly tool: Tool<never>; readonly args: unknown; readonly key: string }
  | { readonly ready: false; readonly outcome: ToolOutcome };

/** What a raced tool call rejects with when the run is aborted while it runs. */
const ABANDONED_TOOL = Symbol("abandoned");
const abandoned = () => ABANDONED_TOOL;

const failed = (content: string): ToolOutcome => ({ content, isError: true });

/** The error kinds of tool calls that never ran, which a per-session call budget does not count. */
const NOT_RUN = new Set([
  "invalid_tool_arguments",
  "unknown_tool",
  "tool_policy_denied",
  "policy_refused",
  "tool_not_started",
]);

/**
 * How many tool calls ran in `session` so far (every result but those of calls refused before
 * running): where a per-session call budget starts counting.
 */
export function toolCallsRun(session: Session): number {
  let count = 0;
  for (const chunk of session.chunks) {
    if (chunk.kind !== "tool_result") continue;
    if (!chunk.isError) {
      count++;
      continue;
    }
    let kind: unknown;
    try {
      kind = (JSON.parse(chunk.content) as { error_kind?: unknown })?.error_kind;
    } catch {
      kind = undefined;
    }
    if (typeof kind !== "string" || !NOT_RUN.has(kind)) count++;
  }
  return count;
}

/**
 * Runs one turn's tool calls in lanes (same resource key one after another in call order,
 * different keys at once) and returns their result chunks in call order. Every call gets a
 * `tool_start` and a `tool_end` event, rejected ones too. On abort, calls still running are
 * abandoned (their result says so) and queued ones are not started, so dispatch returns promptly
 * even when a tool ignores its signal.
 */
export async function dispatch(calls: readonly ToolCall[], given: DispatchContext): Promise<ChunkInput[]> {
  // Records of calls a call policy refused, appended after the turn's results.
  const refused: ChunkInput[] = [];
  const ctx: Turn = given.callPolicies ? { ...given, refused } : given;
  const results = await dispatchTurn(calls, ctx);
  return refused.length > 0 ? [...results, ...refused] : results;
}

/** A turn's dispatch context, with where policy refusals are recorded when call policies apply. */
type Turn = DispatchContext & { readonly refused?: ChunkInput[] };

async function dispatchTurn(calls: readonly ToolCall[], ctx: Turn): Promise<ChunkInput[]> {
  if (calls.length === 1) {
    // One call (the common turn): no lanes to keep.
    const call = calls[0]!;
    const p = await prepare(call, ctx);
    let outcome: ToolOutcome;
    if (p.ready) outcome = await execute(call, 0, p, ctx);
    else {
      start(call, ctx);
      outcome = end(call, p.outcome, ctx);
    }
    return [resultChunk(call, outcome, ctx)];
  }
  const prepared: Prepared[] = await Promise.all(calls.map((call) => prepare(call, ctx)));
  const results: ToolOutcome[] = new Array(calls.length);
  const lanes = new Map<string, Promise<void>>();
  const tasks: Promise<void>[] = [];
  prepared.forEach((p, i) => {
    const call = calls[i]!;
    if (!p.ready) {
      start(call, ctx);
      results[i] = end(call, p.outcome, ctx);
      return;
    }
    const task = (lanes.get(p.key) ?? Promise.resolve()).then(async () => {
      results[i] = await execute(call, i, p, ctx);
    });
    lanes.set(p.key, task);
    tasks.push(task);
  });
  await Promise.all(tasks);
  return calls.map((call, i) =>
    resultChunk(
      call,
      results[i] ?? failed(toolErrorContent("internal_missing_result", "The tool produced no result.")),
      ctx,
    ),
  );
}

function resultChunk(call: ToolCall, r: ToolOutcome, ctx: DispatchContext): ChunkInput {
  return r.isError
    ? {
        kind: "tool_result",
        author: ctx.author,
        toolCallId: call.id,
        name: call.function.name,
        content: r.content,
        isError: true,
      }
    : {
        kind: "tool_result",
        author: ctx.author,
        toolCallId: call.id,
        name: call.function.name,
        content: r.content,
      };
}

function start(call: ToolCall, ctx: DispatchContext): void {
  ctx.emit({
    type: "tool_start",
    agent: ctx.agent,
    callId: call.id,
    name: call.function.name,
    arguments: call.function.arguments,
  });
}

function end(call: ToolCall, outcome: ToolOutcome, ctx: DispatchContext): ToolOutcome {
  ctx.emit({
    type: "tool_end",
    agent: ctx.agent,
    callId: call.id,
    name: call.function.name,
    content: outcome.content,
    isError: outcome.isError,
  });
  return outcome;
}

async function prepare(call: ToolCall, ctx: DispatchContext): Promise<Prepared> {
  const name = call.function.name;
  const parsed = parseToolArguments(call.function.arguments);
  if (!parsed.ok) {
    return {
      ready: false,
      outcome: failed(
        toolErrorContent("invalid_tool_arguments", parsed.message, call.function.arguments.slice(0, 2000)),
      ),
    };
  }
  const tool = ctx.byName.get(name);
  if (!tool) {
    const known = [...ctx.byName.keys()].sort().join(", ") || "(none)";
    return {
      ready: false,
      outcome: failed(
        toolErrorContent("unknown_tool", `There is no tool named "${name}". Available tools: ${known}.`),
      ),
    };
  }
  const checked = await tool.validate(parsed.value);
  if (!checked.ok) {
    return {
      ready: false,
      outcome: failed(
        toolErrorContent(
          "invalid_tool_arguments",
          `Arguments for "${name}" do not match its schema: ${checked.problems.join("; ")}`,
          call.function.arguments.slice(0, 2000),
        ),
      ),
    };
  }
  try {
    return { ready: true, tool, args: checked.value, key: tool.resourceKey(checked.value as never) };
  } catch (error) {
    return { ready: false, outcome: failed(thrown(error)) };
  }
}

async function execute(
  call: ToolCall,
  order: number,
  p: Extract<Prepared, { ready: true }>,
  ctx: Turn,
): Promise<ToolOutcome> {
  const name = p.tool.name;
  start(call, ctx);
  if (ctx.signal.aborted) {
    return end(
      call,
      failed(toolErrorContent("tool_not_started", `The run was aborted before "${name}" started.`)),
      ctx,
    );
  }
  if (ctx.policy) {
    const denial = toolPolicyDenial(ctx.policy, name, p.args, ctx.admitted.count);
    if (denial) {
      return end(
        call,
        failed(toolErrorContent("tool_policy_denied", `Tool policy denied "${name}": ${denial}.`)),
        ctx,
      );
    }
  }
  if (ctx.callPolicies) {
    const judged: PolicyToolCall = {
      by: ctx.agent,
      position: ctx.position,
      order,
      call,
      session: ctx.session,
      tool: p.tool,
      args: p.args,
    };
    const refusal = await judge(ctx.callPolicies, "tool", judged, ctx.session);
    if (refusal) {
      ctx.refused?.push({
        kind: "event",
        name: "policy.refused",
        author: ctx.author,
        data: { target: "tool", by: ctx.agent, tool: name, callId: call.id, reason: refusal.reason },
      });
      return end(
        call,
        failed(toolErrorContent("policy_refused", `The call policy refused "${name}": ${refusal.reason}.`)),
        ctx,
      );
    }
  }
  ctx.admitted.count++;
  const hook = ctx.hooks?.tool;
  let needsApproval = false;
  if (p.tool.needsApproval !== undefined && p.tool.needsApproval !== false) {
    try {
      needsApproval = await approvalNeeded(p, call, ctx);
    } catch (error) {
      return end(call, failed(thrown(error)), ctx);
    }
    if (needsApproval && !(hook && ctx.hooks?.approvals)) {
      const message = `"${name}" needs a human's approval before it runs, and this run has no approver (run the agent inside a durable step, whose journal asks for the approval).`;
      return end(call, failed(toolErrorContent("approval_required", message)), ctx);
    }
  }
  let dispatched: ToolDispatch = {
    by: ctx.agent,
    position: ctx.position,
    order,
    call,
    session: ctx.session,
    tool: p.tool,
    args: p.args,
    needsApproval,
  };
  const make = async (): Promise<ToolOutcome> => {
    if (!hook) return runTool(call, p, ctx);
    try {
      return await hook.call(ctx.hooks, dispatched, (override?: ToolRunOverride) =>
        runTool(call, p, ctx, override),
      );
    } catch (error) {
      return failed(thrown(error));
    }
  };
  const outcome = ctx.observer
    ? await ctx.observer.observe({ kind: "tool", dispatch: dispatched, session: ctx.session }, (span) => {
        dispatched = { ...dispatched, observed: span };
        return make();
      })
    : await make();
  return end(call, outcome, ctx);
}

/** Whether the tool's `needsApproval` asks for a human's approval of this call. */
async function approvalNeeded(
  p: Extract<Prepared, { ready: true }>,
  call: ToolCall,
  ctx: DispatchContext,
): Promise<boolean> {
  const rule = p.tool.needsApproval;
  if (rule === true) return true;
  if (typeof rule !== "function") return false;
  return (await rule(p.args as never, { session: ctx.session, agent: ctx.agent, callId: call.id })) === true;
}

async function runTool(
  call: ToolCall,
  p: Extract<Prepared, { ready: true }>,
  ctx: DispatchContext,
  override?: ToolRunOverride,
): Promise<ToolOutcome> {
  const args = override && "args" in override ? override.args : p.args;
  // Values the tool read through ctx.secret, kept out of what it returns to the transcript.
  const resolved = new Map<string, string>();
  const readSecret = async (secretName: string) => {
    const value = await resolveSecret(secret(secretName), { secrets: ctx.secrets, signal: ctx.signal });
    resolved.set(secretName, value);
    return value;
  };
  const clean = (outcome: ToolOutcome): ToolOutcome =>
    resolved.size === 0 ? outcome : { ...outcome, content: redactSecrets(outcome.content, resolved) };
  return clean(await runToolWith(call, p, ctx, args, readSecret, override));
}

async function runToolWith(
  call: ToolCall,
  p: Extract<Prepared, { ready: true }>,
  ctx: DispatchContext,
  args: unknown,
  readSecret: (name: string) => Promise<string>,
  override: ToolRunOverride | undefined,
): Promise<ToolOutcome> {
  const name = p.tool.name;
  try {
    const running = p.tool.execute(args as never, {
      ...override?.context,
      secret: readSecret,
      session: ctx.session,
      agent: ctx.agent,
      callId: call.id,
      signal: ctx.signal,
      sandbox: ctx.observer
        ? async () =>
            observedSandbox(await ctx.session.sandbox({ signal: ctx.signal }), ctx.observer!, ctx.session)
        : () => ctx.session.sandbox({ signal: ctx.signal }),
      emit: (data) => ctx.emit({ type: "tool_progress", agent: ctx.agent, callId: call.id, name, data }),
    });
    // A synchronous tool has its value already; a pending one is raced against the run's abort.
    const value = isThenable(running)
      ? await raceAbort(Promise.resolve(running), ctx.race, abandoned)
      : running;
    return { content: projectToolResult(value, p.tool.maxResultChars), isError: false };
  } catch (error) {
    if (error === ABANDONED_TOOL) {
      return failed(
        toolErrorContent(
          "aborted",
          `The run was aborted while "${name}" was running; its result was abandoned.`,
        ),
      );
    }
    return failed(thrown(error));
  }
}

function isThenable(value: unknown): value is PromiseLike<unknown> {
  return (
    (typeof value === "object" || typeof value === "function") &&
    value !== null &&
    typeof (value as { then?: unknown }).then === "function"
  );
}

/** The structured result of a tool that threw. */
function thrown(error: unknown): string {
  if (OpenRathError.isInstance(error)) {
    // A coded error already says what failed; its details (JSON-safe ones) help the model more than a class name.
    let detail: string | undefined;
    try {
      detail = Object.keys(error.details).length > 0 ? JSON.stringify(error.details) : undefined;
    } catch {
      detail = undefined;
    }
    return toolErrorContent(error.code, error.message, detail);
  }
  const message = `${(error as Error)?.name ?? "Error"}: ${(error as Error)?.message ?? String(error)}`;
  return toolErrorContent("tool_execution_exception", message, (error as Error)?.name);
}
