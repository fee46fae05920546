import type { AgentEvent, AgentOptions, RunOptions } from "./agent-options.js";
import { AgentRunError } from "./agent-options.js";
import { Budget, BudgetExceededError } from "./budget.js";
import { SANDBOX_TOOLS } from "./builtin-tools.js";
import { BRANCH_EXTRA, type Branch, branchLabel, type CallPosition, REQUEST_EXTRA } from "./call-position.js";
import type { AssistantChunk, Chunk, ChunkInput, Message } from "./chunk.js";
import { OpenRathError } from "./errors.js";
import { chainStart, type HashLanes, mixLanes } from "./internal/hash.js";
import type { JsonValue } from "./json.js";
import { callModel } from "./model-call.js";
import { type TraceLink, traceExtras } from "./observer.js";
import type { ProviderDelta, ProviderRequest, ProviderResponse, ProviderV1 } from "./provider.js";
import {
  chainDigest,
  messageLanes,
  projectChunk,
  type RequestDigest,
  requestDigest,
} from "./request-fingerprint.js";
import type { Session } from "./session.js";
import { type Tool, toolSpecs } from "./tool.js";
import { dispatch, toolCallsRun } from "./tool-dispatch.js";

/** What the loop needs of its agent. */
export interface LoopAgent {
  readonly name: string;
  readonly instructions: string | undefined;
  readonly provider: ProviderV1;
  readonly tools: readonly Tool<never>[];
  readonly maxTurns: number;
}

/** The parts of a request that stay the same for every turn of an agent's runs (per tool set). */
interface Prepared {
  readonly tools: readonly Tool<never>[];
  readonly byName: ReadonlyMap<string, Tool<never>>;
  readonly specs: ProviderRequest["tools"];
  readonly head: readonly Message[];
  /** The message chain after the head. */
  readonly headChain: HashLanes;
  readonly headChars: number;
  readonly digest: RequestDigest;
}

const preparedFor = new WeakMap<LoopAgent, { placed?: Prepared; unplaced?: Prepared }>();

function prepare(agent: LoopAgent, config: AgentOptions, placed: boolean): Prepared {
  let entry = preparedFor.get(agent);
  if (!entry) {
    entry = {};
    preparedFor.set(agent, entry);
  }
  const hit = placed ? entry.placed : entry.unplaced;
  if (hit) return hit;
  // Tools that need a sandbox (the built-ins, or a user tool that says so) are offered only to a placed session.
  const tools = placed ? [...agent.tools, ...SANDBOX_TOOLS] : agent.tools.filter((t) => !t.needsSandbox);
  const specs = toolSpecs(tools);
  const head: Message[] = agent.instructions ? [{ role: "system", content: agent.instructions }] : [];
  const request: ProviderRequest = {
    ...config.request,
    messages: head,
    ...(specs.length > 0 ? { tools: specs } : {}),
  };
  const made: Prepared = {
    tools,
    byName: new Map(tools.map((t) => [t.name, t])),
    specs: specs.length > 0 ? specs : undefined,
    head,
    headChain: chainOf(head),
    headChars: head.reduce((n, m) => n + JSON.stringify(m).length, 0),
    digest: requestDigest(request, head.length),
  };
  if (placed) entry.placed = made;
  else entry.unplaced = made;
  return made;
}

/**
 * One agent run on `input`: the output is `input.derive({ op: "loop" })` plus the turns. Each
 * turn sends the head and the transcript through {@link callModel} (budgets, call hooks, retries),
 * appends the reply, and dispatches its tool calls; the run ends on a reply without tool calls or
 * at `maxTurns`.
 */
export async function runLoop(
  agent: LoopAgent,
  config: AgentOptions,
  input: Session,
  run: RunOptions,
  streaming: boolean,
  branch: Branch,
  link?: TraceLink,
): Promise<Session> {
  const author = run.path ? `${run.path}/${agent.name}` : agent.name;
  const emit = run.onEvent ?? ignore;
  // Tools always get a signal; without the caller's, one that never fires (nothing to race then).
  const signal = run.signal ?? NEVER;
  const p = prepare(agent, config, input.placement !== undefined);
  const own = config.budget ? new Budget(config.budget) : undefined;
  const label = branchLabel(branch);
  let out = input.derive({
    op: "loop",
    operator: agent.name,
    extras: {
      [BRANCH_EXTRA]: branch.key,
      [REQUEST_EXTRA]: p.digest as unknown as JsonValue,
      ...traceExtras(link),
    },
  });
  const admitted = { count: config.toolPolicy?.maxCalls !== undefined ? toolCallsRun(input) : 0 };
  // The transcript as messages, kept up to date as the run appends (each chunk projected once).
  const messages: Message[] = [...p.head];
  const chain: HashLanes = [...p.headChain];
  let chars = p.headChars;
  const add = (chunk: Chunk) => {
    const projected = projectChunk(chunk);
    if (!projected) return;
    messages.push(projected.message);
    mixLanes(chain, projected.lanes);
    chars += projected.chars;
  };
  for (const chunk of out.chunks) add(chunk);
  let finished = false;

  const fail = (error: unknown, what: string): never => {
    const aborted = signal.aborted || OpenRathError.isInstance(error, "aborted");
    out = out.append({
      kind: "event",
      name: "agent.error",
      author,
      data: {
        agent: agent.name,
        code: aborted ? "aborted" : OpenRathError.isInstance(error) ? error.code : "error",
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

  const onDelta = streaming ? (delta: StreamedDelta) => emitDelta(agent.name, delta, emit) : undefined;
  for (let turn = 1; turn <= agent.maxTurns; turn++) {
    if (signal.aborted) fail(signal.reason, `before turn ${turn}`);
    emit({ type: "turn_start", agent: agent.name, turn });
    // The messages are frozen and shared with later turns: a provider reads them, never changes them.
    const request: ProviderRequest = config.request
      ? { ...config.request, messages: messages.slice(), ...(p.specs ? { tools: p.specs } : {}) }
      : p.specs
        ? { messages: messages.slice(), tools: p.specs }
        : { messages: messages.slice() };
    const position: CallPosition = { branch: branch.key, label, index: turn - 1 };
    let response: ProviderResponse;
    let fingerprint: string;
    try {
      ({ response, fingerprint } = await callModel({
        kind: "Agent",
        by: agent.name,
        author,
        provider: agent.provider,
        request,
        messagesDigest: chainDigest(chain),
        promptChars: chars,
        position,
        streaming,
        retry: config.retry,
        run,
        signal: run.signal,
        own,
        policy: config.policy,
        session: out,
        onDelta,
      }));
    } catch (error) {
      // A budget or policy stop already carries the session with its record; it is not a failure of the agent.
      if (error instanceof BudgetExceededError || OpenRathError.isInstance(error, "policy_refused"))
        throw error;
      return fail(error, `calling the model on turn ${turn}`);
    }
    if (signal.aborted) fail(signal.reason, `on turn ${turn}`);
    out = out.append({
      kind: "assistant",
      author,
      content: response.content,
      ...(response.toolCalls.length > 0 ? { toolCalls: response.toolCalls } : {}),
      // Provider state (thinking blocks, reasoning items) that must go back with this turn.
      ...(response.reasoning && response.reasoning.length > 0 ? { reasoning: response.reasoning } : {}),
      ...(response.usage ? { usage: response.usage } : {}),
      model: response.model,
      finishReason: response.finishReason,
      requestHash: fingerprint,
    } as ChunkInput);
    const assistant = out.at(-1) as AssistantChunk;
    add(assistant);
    emit({ type: "assistant", agent: agent.name, chunk: assistant });
    if (response.toolCalls.length === 0) {
      finished = true;
      break;
    }
    const results = await dispatch(response.toolCalls, {
      agent: agent.name,
      author,
      byName: p.byName,
      session: out,
      signal,
      emit,
      policy: config.toolPolicy,
      callPolicies: run.policy || config.policy ? [run.policy, config.policy] : undefined,
      secrets: run.secrets,
      admitted,
      hooks: run.calls,
      observer: run.observer,
      position,
      race: run.signal,
    });
    const before = out.length;
    out = out.append(...results);
    for (let i = before; i < out.length; i++) add(out.at(i)!);
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

type StreamedDelta = Exclude<ProviderDelta, { type: "response" }>;
type ToolCallDeltaEvent = Extract<AgentEvent, { type: "tool_call_delta" }>;

const ignore = () => {};

/** The message chain over `messages`. */
function chainOf(messages: readonly Message[]): HashLanes {
  const chain = chainStart();
  for (const m of messages) mixLanes(chain, messageLanes(m));
  return chain;
}
const NEVER = new AbortController().signal;

function emitDelta(agent: string, delta: StreamedDelta, emit: (e: AgentEvent) => void): void {
  if (delta.type === "text") {
    emit({ type: "text_delta", agent, text: delta.text });
    return;
  }
  // Field by field, not by spreading: this runs for every streamed piece of a tool call.
  const event: { -readonly [K in keyof ToolCallDeltaEvent]: ToolCallDeltaEvent[K] } = {
    type: "tool_call_delta",
    agent,
    index: delta.index,
  };
  if (delta.id !== undefined) event.id = delta.id;
  if (delta.name !== undefined) event.name = delta.name;
  if (delta.arguments !== undefined) event.arguments = delta.arguments;
  emit(event);
}
