import type { ModelCall, ToolDispatch } from "./agent-options.js";
import { OpenRathError } from "./errors.js";
import type { Session } from "./session.js";
import { type TrustLabel, trustLabels } from "./trust.js";

/** A policy's answer: let the call be made, or refuse it (the reason goes to the record and the model). */
export type PolicyVerdict = "allow" | { readonly refuse: string };

/** What a policy sees besides the call: the session so far and the trust of what it holds. */
export interface PolicyContext {
  /** The session as of the call (a tool call: as of the turn that asked for it). */
  readonly session: Session;
  /**
   * The trust labels of the session's model-visible chunks (see `trustOf`): `memory_recall`
   * or `tool_output` here means the model has read text nobody vouched for.
   */
  readonly trust: ReadonlySet<TrustLabel>;
}

/** A tool call as a policy sees it: before approval is asked and before the tool runs. */
export type PolicyToolCall = Omit<ToolDispatch, "needsApproval">;

/**
 * Rules that may refuse a model or tool call before it is made (see ADR 0029). Each function
 * runs before the call's hooks (a durable journal, tracing), so a refused call is never sent,
 * journaled or asked for approval. A function that throws, or answers anything but `"allow"` or
 * `{ refuse: reason }`, refuses (the policy fails closed).
 *
 * - A refused tool call comes back to the model as an error result (`error_kind:
 *   "policy_refused"`) and is recorded as a `policy.refused` event chunk; the run goes on.
 * - A refused model call stops the step with {@link PolicyRefusedError} (code `policy_refused`).
 *
 * @example
 * ```ts
 * const policy: CallPolicy = {
 *   tool: (call, { trust }) =>
 *     call.tool.name === "send_email" && (trust.has("memory_recall") || trust.has("tool_output"))
 *       ? { refuse: "send_email after reading untrusted text" }
 *       : "allow",
 * };
 * await agent.run(session, { policy });
 * ```
 */
export interface CallPolicy {
  /** Judges each model call (agents, selectors, compressors). */
  model?(call: ModelCall, context: PolicyContext): PolicyVerdict | Promise<PolicyVerdict>;
  /** Judges each tool call that passed argument checks and the agent's `toolPolicy`. */
  tool?(call: PolicyToolCall, context: PolicyContext): PolicyVerdict | Promise<PolicyVerdict>;
}

/**
 * Thrown when a call policy refuses a model call (code `policy_refused`). `session` is the
 * transcript so far, ending with a `policy.refused` event chunk.
 */
export class PolicyRefusedError extends OpenRathError {
  constructor(
    message: string,
    /** The session as it stood, with the `policy.refused` event appended. */
    readonly session: Session,
    details: Record<string, unknown>,
    cause?: unknown,
  ) {
    super("policy_refused", message, { details: { ...details, retryable: false }, cause });
  }
}

/** The refusal of a policy check: why, and what the policy threw, if it threw. */
export interface PolicyRefusal {
  readonly reason: string;
  readonly cause?: unknown;
}

/**
 * Asks `policies` (in order; absent ones skipped) about one call; the first refusal wins. The
 * trust labels are computed once, only when some policy has a rule for this kind of call.
 */
export async function judge<C>(
  policies: readonly (CallPolicy | undefined)[],
  which: "model" | "tool",
  call: C,
  session: Session,
): Promise<PolicyRefusal | undefined> {
  let context: PolicyContext | undefined;
  for (const policy of policies) {
    const rule = policy?.[which] as
      | ((call: C, context: PolicyContext) => PolicyVerdict | Promise<PolicyVerdict>)
      | undefined;
    if (typeof rule !== "function") continue;
    context ??= { session, trust: trustLabels(session) };
    let verdict: unknown;
    try {
      verdict = await rule.call(policy, call, context);
    } catch (error) {
      return { reason: `the policy threw: ${(error as Error)?.message ?? String(error)}`, cause: error };
    }
    if (verdict === "allow") continue;
    const reason = (verdict as { refuse?: unknown } | null)?.refuse;
    if (typeof reason === "string" && reason !== "") return { reason };
    return {
      reason: `the policy answered ${JSON.stringify(verdict) ?? String(verdict)}, which is neither "allow" nor { refuse: reason }`,
    };
  }
  return undefined;
}
