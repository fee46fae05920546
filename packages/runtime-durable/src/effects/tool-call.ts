import {
  type JsonObject,
  type JsonValue,
  OpenRathError,
  type ToolContext,
  type ToolDispatch,
  type ToolOutcome,
  type ToolRunOverride,
} from "@openrath/core";
import { projectToolResult, toolErrorContent } from "@openrath/core/backend";
import { DurableError } from "../contract/durable-error.js";
import type { EffectRecord } from "../contract/effect-records.js";
import type { InterruptRequest } from "../contract/step-context.js";
import type { JournalAttempt, ResolutionEvidence } from "../journal/journal-attempt.js";
import {
  approvalPosition,
  argumentsDigest,
  toolFingerprint,
  toolInterruptPosition,
  toolLabel,
  toolPosition,
} from "../journal/positions.js";
import { effectOf, idempotencyKeyOf, isLedgered, safeToRepeat } from "./effect-rules.js";

/** A tool call's journal entry: its outcome, and the operator's resolution it stands for, if any. */
interface RecordedOutcome extends ToolOutcome {
  readonly resolution?: ResolutionEvidence;
}

const failed = (kind: string, message: string): ToolOutcome => ({
  content: toolErrorContent(kind, message),
  isError: true,
});

function asOutcome(error: unknown): ToolOutcome {
  if (OpenRathError.isInstance(error)) return failed(error.code, error.message);
  return failed("tool_execution_exception", String((error as Error)?.message ?? error));
}

/** The schema of an approval decision's payload: `{ arguments }` for an edit, `{ result }` for a response. */
function approvalSchema(parameters: JsonObject): JsonObject {
  return {
    type: "object",
    properties: { arguments: parameters, result: {} },
    additionalProperties: false,
  };
}

/**
 * One tool call of a journaled step: answered from the journal when recorded; otherwise asked for
 * approval when its tool needs it, then, for calls that change the world (`idempotent`, `non_idempotent`), sent through the effect ledger:
 * a keyed success is returned without calling the tool, an effect a crash left unfinished is
 * retried when safe and put under review (the run parked `needs_review`) when not, an operator's
 * resolution stands in for the call. The outcome and the journal entry are written together.
 */
export async function runToolCall(
  attempt: JournalAttempt,
  d: ToolDispatch,
  next: (override?: ToolRunOverride) => Promise<ToolOutcome>,
): Promise<ToolOutcome> {
  const position = toolPosition(d.position, d.order);
  const label = toolLabel(d.position, d.order, d.tool.name);
  attempt.claim(position, label);
  const fingerprint = toolFingerprint(d.call);
  const entry = attempt.entry(position, "tool", fingerprint, label);
  if (entry) {
    d.observed?.note({ replayed: "journal", "journal.position": position });
    const recorded = entry.result as unknown as RecordedOutcome;
    if (recorded.resolution) attempt.evidence.push(recorded.resolution);
    return { content: recorded.content, isError: recorded.isError };
  }
  return attempt.live((self) => liveCall(attempt, d, next, { position, label, fingerprint, self }));
}

async function liveCall(
  attempt: JournalAttempt,
  d: ToolDispatch,
  next: (override?: ToolRunOverride) => Promise<ToolOutcome>,
  at: { position: string; label: string; fingerprint: string; self: symbol },
): Promise<ToolOutcome> {
  const { ctx, store } = attempt;
  const fence = ctx.fence;
  const journal = {
    position: at.position,
    kind: "tool" as const,
    fingerprint: at.fingerprint,
    label: at.label,
    ...(d.observed?.link ? { trace: d.observed.link } : {}),
  };
  const finish = async (outcome: RecordedOutcome): Promise<ToolOutcome> => {
    await attempt.record({ ...journal, result: outcome as unknown as JsonValue });
    return { content: outcome.content, isError: outcome.isError };
  };

  let args = d.args;
  if (d.needsApproval) {
    const request: InterruptRequest = {
      kind: "approval",
      request: {
        tool: d.tool.name,
        description: d.tool.description,
        arguments: d.args as JsonValue,
        callId: d.call.id,
        agent: d.by,
      },
      schema: approvalSchema(d.tool.parameters),
    };
    const decision = await attempt.ask(approvalPosition(at.position), request, {
      exclude: at.self,
      label: `approval of the ${at.label}`,
    });
    const payload = (decision.payload ?? {}) as { arguments?: unknown; result?: JsonValue };
    if (decision.kind === "reject") {
      const why = decision.reason ? `: ${decision.reason}` : ".";
      return finish(
        failed(
          "tool_rejected",
          `${decision.actor ?? "A reviewer"} rejected this call of "${d.tool.name}"${why}`,
        ),
      );
    }
    if (decision.kind === "respond") {
      return finish({
        content: projectToolResult(payload.result ?? null, d.tool.maxResultChars),
        isError: false,
      });
    }
    if (decision.kind === "edit") {
      const checked = await d.tool.validate(payload.arguments ?? {});
      if (!checked.ok) {
        return finish(
          failed(
            "invalid_tool_arguments",
            `The arguments ${decision.actor ?? "the reviewer"} approved for "${d.tool.name}" do not match its schema: ${checked.problems.join("; ")}`,
          ),
        );
      }
      args = checked.value;
    }
  }

  let asked = 0;
  let effectId: string | undefined;
  let interrupted = false;
  const context: {
    idempotencyKey?: string;
    interrupt: NonNullable<ToolContext["interrupt"]>;
    extensions: Readonly<Record<string, unknown>>;
  } = {
    interrupt: (request) => {
      const n = asked++;
      interrupted = true;
      return attempt.ask(toolInterruptPosition(at.position, n), request, {
        exclude: at.self,
        ...(effectId ? { releaseEffectId: effectId } : {}),
        label: `interrupt ${n + 1} of the ${at.label}`,
      });
    },
    extensions: { ...ctx.extensions, journal: attempt.handle },
  };
  const run = async (): Promise<ToolOutcome> => next({ args, context });
  /** The call's outcome is not to be recorded: it parked the run, or the step's signal fired mid-call. */
  const unrecordable = () => (interrupted && attempt.parked) || ctx.signal.aborted;

  const effect = effectOf(d.tool);
  if (!isLedgered(effect)) {
    const outcome = await run();
    if (unrecordable()) return outcome;
    return finish(outcome);
  }

  let key: string | null;
  try {
    key = idempotencyKeyOf(d.tool, args, {
      runId: ctx.runId,
      checkpointSeq: attempt.checkpointSeq,
      position: at.position,
    });
  } catch (error) {
    return finish(asOutcome(error));
  }
  if (key !== null) context.idempotencyKey = key;

  let begun: { effect: EffectRecord; created: boolean };
  try {
    // The reply that asked for this call goes with its dispatch, in one statement, unless the
    // journal holds it already: no effect is dispatched on an answer the journal does not hold.
    begun = await attempt.writeCarrying((carried) =>
      store.beginEffect(
        fence,
        {
          checkpointSeq: attempt.checkpointSeq,
          stepId: ctx.stepId,
          position: at.position,
          tool: d.tool.name,
          callId: d.call.id,
          effect,
          idempotencyKey: key,
          argumentsDigest: argumentsDigest(args),
          arguments: (args ?? null) as JsonValue,
        },
        carried,
      ),
    );
  } catch (error) {
    if (DurableError.isInstance(error, "effect_conflict")) return finish(asOutcome(error));
    throw error;
  }
  let current = begun.effect;
  effectId = current.id;
  if (!begun.created) {
    const known = await judge(attempt, current, at);
    if (known) {
      // A recorded outcome (a keyed success, an operator's resolution) stands in for the call.
      if (current.status === "succeeded" || current.status === "failed")
        d.observed?.note({ replayed: "effect_ledger" });
      return finish(known);
    }
    current = await attempt.write(() => store.dispatchEffect(fence, current.id));
  }

  const outcome = await run();
  if (unrecordable()) return outcome;
  const own = attempt.full({ ...journal, result: outcome as unknown as JsonValue });
  await attempt.writeCarrying((carried) =>
    store.completeEffect(fence, current.id, outcome, [...carried, own]),
  );
  attempt.countRecordedTool();
  return outcome;
}

/**
 * What to do with an effect already in the ledger: its known outcome (a keyed success, an
 * operator's resolution), or `undefined` to send it (again). An ambiguous effect that is not safe
 * to repeat parks the run for review (throws `run_parked`).
 */
async function judge(
  attempt: JournalAttempt,
  effect: EffectRecord,
  at: { label: string; self: symbol },
): Promise<RecordedOutcome | undefined> {
  const { ctx, store } = attempt;
  switch (effect.status) {
    case "succeeded":
    case "failed": {
      const resolution = effect.resolution;
      if (resolution && resolution.kind !== "retry" && effect.outcome) {
        const evidence: ResolutionEvidence = {
          effectId: effect.id,
          tool: effect.tool,
          callId: effect.callId,
          kind: resolution.kind,
          actor: resolution.actor,
          ...(resolution.reason !== undefined ? { reason: resolution.reason } : {}),
        };
        attempt.evidence.push(evidence);
        return { ...effect.outcome, resolution: evidence };
      }
      // A keyed success is the call's result; a known failure may be tried again.
      if (effect.status === "succeeded" && effect.outcome) return effect.outcome;
      return undefined;
    }
    case "prepared":
      return undefined;
    case "dispatched":
      if (effect.fencingToken >= ctx.fence.token) {
        return {
          content: toolErrorContent(
            "effect_conflict",
            `The ${at.label} uses idempotency key ${JSON.stringify(effect.idempotencyKey)}, which another call of this step is using right now.`,
          ),
          isError: true,
        };
      }
      if (safeToRepeat(effect.effect, effect.idempotencyKey !== null)) return undefined;
      return attempt.park(
        `the outcome of the ${at.label} is unknown (its worker lost the lease mid-call) and a ${effect.effect}${effect.idempotencyKey === null && effect.effect === "idempotent" ? " unkeyed" : ""} call is not repeated without a human's review`,
        at.self,
        () => store.reviewEffect(ctx.fence, effect.id),
      );
    case "needs_review":
      return attempt.park(`the ${at.label} is under review`, at.self, () =>
        store.reviewEffect(ctx.fence, effect.id),
      );
  }
}
