import type { ModelCall, RunOptions } from "./agent-options.js";
import { type Budget, type BudgetHold, budgetStop } from "./budget.js";
import { type CallPolicy, judge, PolicyRefusedError } from "./call-policy.js";
import type { CallPosition } from "./call-position.js";
import {
  callProvider,
  type ProviderDelta,
  type ProviderRequest,
  type ProviderResponse,
  type ProviderV1,
  type RetryOptions,
  type RetryPolicy,
} from "./provider.js";
import { requestFingerprint } from "./request-fingerprint.js";
import type { Session } from "./session.js";

/** One model call of a step (agent turn, selector decision, compression), as {@link callModel} makes it. */
export interface ModelCallSpec {
  /** What kind of step calls: `Agent`, `Selector`, `Compressor` (for messages and the stop event). */
  readonly kind: string;
  /** The step's name. */
  readonly by: string;
  /** Author of a budget stop's event (workflow path included). */
  readonly author: string;
  readonly provider: ProviderV1;
  readonly request: ProviderRequest;
  /** The messages' chained digest, when the caller keeps it (an agent does, per chunk). */
  readonly messagesDigest?: string;
  /** Characters of the messages' JSON, when known, for the budget's estimate. */
  readonly promptChars?: number;
  readonly position: CallPosition;
  readonly streaming: boolean;
  readonly retry?: RetryPolicy | undefined;
  /** The run: its signal, shared budget and call hooks. */
  readonly run: RunOptions;
  readonly signal: AbortSignal | undefined;
  /** The step's own limits for this run, if any. */
  readonly own?: Budget | undefined;
  /** The step's own call policy (an agent's `policy`), checked after the run's. */
  readonly policy?: CallPolicy | undefined;
  /** Where a budget stop is recorded (the session the step is writing). */
  readonly session: Session;
  /** Receives streamed text and tool-call deltas. */
  readonly onDelta?: ((delta: Exclude<ProviderDelta, { type: "response" }>) => void) | undefined;
}

/** A call's answer and the fingerprint of the request it answered. */
export interface ModelCallResult {
  readonly response: ProviderResponse;
  readonly fingerprint: string;
}

/** Tokens a call is expected to take: its prompt (about four characters a token) plus its declared `maxTokens`. */
function estimate(spec: ModelCallSpec): number {
  const chars = spec.promptChars ?? JSON.stringify(spec.request.messages).length;
  return Math.ceil(chars / 4) + (spec.request.maxTokens ?? 0);
}

/**
 * The one path of every model call in a run: ask the call policies (or stop), reserve the budgets
 * (or stop, the same way for every step), go through the run's `calls.model` hook, call the provider with retries (streaming or
 * not), and settle the budgets with what the call used.
 *
 * @throws {PolicyRefusedError} before the call when a call policy refuses it.
 * @throws {BudgetExceededError} before the call when a budget refuses it.
 */
export async function callModel(spec: ModelCallSpec): Promise<ModelCallResult> {
  const { request, run } = spec;
  const fingerprint = requestFingerprint(request, spec.messagesDigest);
  let call: ModelCall = {
    by: spec.by,
    position: spec.position,
    request,
    fingerprint,
    streaming: spec.streaming,
  };
  if (run.policy || spec.policy) {
    const refusal = await judge([run.policy, spec.policy], "model", call, spec.session);
    if (refusal) throw policyStop(spec, refusal.reason, refusal.cause);
  }
  const holds: BudgetHold[] = [];
  if (run.budget || spec.own) {
    const budgets: [Budget | undefined, "run" | "own"][] = [
      [run.budget, "run"],
      [spec.own, "own"],
    ];
    const tokens = estimate(spec);
    const model = request.model ?? spec.provider.model;
    for (const [budget, which] of budgets) {
      if (!budget) continue;
      const hold = budget.reserve(tokens, model);
      if ("reason" in hold) {
        for (const h of holds) h.release();
        throw budgetStop(
          spec.session,
          { by: spec.by, kind: spec.kind, author: spec.author, call: spec.position.index + 1, budget: which },
          hold,
        );
      }
      holds.push(hold);
    }
  }
  const options: RetryOptions = {
    signal: spec.signal,
    retry: spec.retry,
    onDelta: spec.streaming ? spec.onDelta : undefined,
    position: spec.position,
  };
  let response: ProviderResponse;
  try {
    const hook = run.calls?.model;
    const make = (): Promise<ProviderResponse> =>
      hook
        ? hook.call(run.calls, call, () => callProvider(spec.provider, request, options))
        : callProvider(spec.provider, request, options);
    const observer = run.observer;
    if (observer) {
      const work = {
        kind: "model",
        step: spec.kind,
        call,
        provider: spec.provider,
        session: spec.session,
      } as const;
      response = await observer.observe(work, (span) => {
        call = { ...call, observed: span };
        return make();
      });
    } else response = await make();
  } catch (error) {
    for (const h of holds) h.release();
    throw error;
  }
  for (const h of holds) h.settle(response.usage, response.model);
  return { response, fingerprint };
}

/** The error a refused model call stops with, its session ending with a `policy.refused` event. */
function policyStop(spec: ModelCallSpec, reason: string, cause: unknown): PolicyRefusedError {
  const call = spec.position.index + 1;
  const recorded = spec.session.append({
    kind: "event",
    name: "policy.refused",
    author: spec.author,
    data: { target: "model", by: spec.by, kind: spec.kind, call, reason },
  });
  return new PolicyRefusedError(
    `${spec.kind} "${spec.by}": the call policy refused model call ${call}: ${reason}.`,
    recorded,
    { by: spec.by, call, reason },
    cause,
  );
}
