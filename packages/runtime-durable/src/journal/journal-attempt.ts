import {
  type CallHooks,
  type JsonValue,
  type ModelCall,
  OpenRathError,
  type ProviderResponse,
  type ToolDispatch,
  type ToolOutcome,
  type ToolRunOverride,
} from "@openrath/core";
import { DurableError } from "../contract/durable-error.js";
import type { JournaledInterrupt } from "../contract/interrupt-records.js";
import type {
  JournalEntry,
  JournalEntryInput,
  JournalKind,
  StepJournalState,
} from "../contract/journal-records.js";
import type { JournalStoreV1 } from "../contract/journal-store.js";
import type { InterruptDecision, InterruptRequest, StepContext } from "../contract/step-context.js";
import { runToolCall } from "../effects/tool-call.js";
import { checkRequest, deliveredPayload, isJsonValue } from "../interrupts/interrupt-schema.js";
import {
  callFingerprint,
  interruptFingerprint,
  modelLabel,
  modelPosition,
  stepCallPosition,
  stepInterruptPosition,
} from "./positions.js";
import { ReplyEntries } from "./reply-entries.js";

/** An operator's resolution the step's output records as evidence (an `effect.resolved` event chunk). */
export interface ResolutionEvidence {
  readonly effectId: string;
  readonly tool: string;
  readonly callId: string;
  readonly kind: "succeeded" | "failed";
  readonly actor: string;
  readonly reason?: string;
}

/**
 * What a step sees of its journal (`journalOf(ctx)`): journaled functions of its own, and counts
 * of what this attempt replayed and recorded.
 */
export interface StepJournal {
  /** The step visit (the run's checkpoint sequence when the step started). */
  readonly checkpointSeq: number;
  /**
   * Runs `fn` once per step visit: its JSON value is journaled at the next position of the step's
   * own calls, and an attempt resumed after a crash (or an interrupt) gets the recorded value
   * without calling `fn` again. `name` is part of the fingerprint: another name at the same
   * position is a divergence.
   */
  run<T extends JsonValue>(name: string, fn: () => T | Promise<T>): Promise<T>;
  /** Calls of this attempt answered from the journal, by kind. */
  readonly replayed: Readonly<Record<JournalKind | "interrupt", number>>;
  /** Calls of this attempt made live and recorded, by kind. */
  readonly recorded: Readonly<Record<JournalKind | "interrupt", number>>;
}

const RETRY_LIMIT_MS = 60_000;

const STOP_CODES = new Set(["stale_fence", "version_conflict", "journal_conflict"]);

/**
 * One attempt of one step under the journal: answers recorded calls from the journal, records
 * live ones (fenced) before their result is used, and stops the attempt — no further live call —
 * once it parks the run (an interrupt, an effect under review) or fails closed (a divergence, a
 * stale fence, two calls on one position).
 */
export class JournalAttempt {
  readonly hooks: CallHooks;
  readonly handle: StepJournal;
  /** Resolutions replayed into this attempt's tool results. */
  readonly evidence: ResolutionEvidence[] = [];
  /** Why the attempt failed closed; the middleware throws it whatever the step returned. */
  failure: DurableError | undefined;
  /** The run was parked by this attempt. */
  parked = false;
  private stop: DurableError | undefined;
  private parking: Promise<unknown> | undefined;
  private readonly entries = new Map<string, JournalEntry>();
  private readonly asked = new Map<string, JournaledInterrupt>();
  private readonly claimed = new Set<string>();
  private readonly inflight = new Map<symbol, Promise<unknown>>();
  private readonly replies = new ReplyEntries((entry) =>
    this.write(() => this.store.record(this.ctx.fence, [entry])),
  );
  private stepInterrupts = 0;
  private stepCalls = 0;
  private readonly counts = {
    replayed: { model: 0, tool: 0, call: 0, interrupt: 0 },
    recorded: { model: 0, tool: 0, call: 0, interrupt: 0 },
  };

  constructor(
    readonly store: JournalStoreV1,
    readonly ctx: StepContext,
    state: StepJournalState,
  ) {
    this.checkpointSeq = state.checkpointSeq;
    for (const entry of state.entries) this.entries.set(entry.position, entry);
    for (const interrupt of state.interrupts) this.asked.set(interrupt.position, interrupt);
    this.hooks = {
      approvals: true,
      model: (call, next) => this.model(call, next),
      tool: (dispatch, next) => this.tool(dispatch, next),
    };
    this.handle = {
      checkpointSeq: state.checkpointSeq,
      run: (name, fn) => this.journaled(name, fn),
      replayed: this.counts.replayed,
      recorded: this.counts.recorded,
    };
  }

  readonly checkpointSeq: number;

  /** Throws what stops the attempt, if anything does: no new live call after a park or a failure. */
  gate(): void {
    if (this.stop) throw this.stop;
  }

  /** Claims a journal position for one call of this attempt. */
  claim(position: string, label: string): void {
    if (this.claimed.has(position)) {
      this.failWith(
        new DurableError(
          "journal_conflict",
          `Step "${this.ctx.stepId}" of run ${this.ctx.runId} made two calls at one journal position (${label}). Pass the step's context (or at least its \`scope\` and \`calls\`) to every agent, workflow, selector and compressor run in the step, so each call has its own position.`,
          { details: { runId: this.ctx.runId, stepId: this.ctx.stepId, position, retryable: false } },
        ),
      );
    }
    this.claimed.add(position);
  }

  /** The recorded entry at `position`, checked against the live call's fingerprint. */
  entry(position: string, kind: JournalKind, fingerprint: string, label: string): JournalEntry | undefined {
    const entry = this.entries.get(position);
    if (!entry) return undefined;
    if (entry.kind !== kind || entry.fingerprint !== fingerprint)
      this.diverge(position, label, entry.fingerprint, fingerprint);
    this.counts.replayed[kind]++;
    return entry;
  }

  /** Fails the attempt closed: the live call differs from the journal at the same position. */
  diverge(position: string, label: string, recorded: string, live: string): never {
    return this.failWith(
      new DurableError(
        "journal_divergence",
        `Run ${this.ctx.runId}, step "${this.ctx.stepId}": the ${label} differs from the one recorded in the journal (a changed prompt, tool set or step code since the run started), so it will not be mixed with the recorded calls. Cancel the run, or finish it with the code it started with.`,
        {
          details: {
            runId: this.ctx.runId,
            stepId: this.ctx.stepId,
            position,
            call: label,
            recorded,
            live,
            retryable: false,
          },
        },
      ),
    );
  }

  /** Records `error` as the attempt's failure, stops it, and throws it. */
  failWith(error: DurableError): never {
    this.failure ??= error;
    this.stop ??= error;
    throw error;
  }

  /** Runs a live call, tracked until it settles (a park waits for the calls in flight to be recorded). */
  live<T>(work: (self: symbol) => Promise<T>): Promise<T> {
    this.gate();
    const self = Symbol("call");
    const running = work(self);
    this.inflight.set(self, running);
    const forget = () => this.inflight.delete(self);
    running.then(forget, forget);
    return running;
  }

  /**
   * A fenced journal write, after the commits of the steps before. Retried while the store is unreachable (until the step's signal fires);
   * a stale fence, a version conflict or a journal conflict stops the attempt (after a park, the
   * write is dropped: the run is no longer this worker's). Other coded errors go to the caller.
   */
  async write<T>(work: () => Promise<T>): Promise<T> {
    // This visit's journal exists once the checkpoint it starts from is committed (the worker
    // starts a step while the previous step's commit is in flight).
    await this.ctx.checkpointed();
    const started = Date.now();
    let delay = 25;
    for (;;) {
      try {
        return await work();
      } catch (error) {
        if (
          OpenRathError.isInstance(error, "store_unavailable") &&
          !this.ctx.signal.aborted &&
          Date.now() - started < RETRY_LIMIT_MS
        ) {
          await new Promise((r) => setTimeout(r, delay));
          delay = Math.min(delay * 2, 1000);
          continue;
        }
        if (OpenRathError.isInstance(error) && STOP_CODES.has(error.code)) {
          if (this.parked) throw this.stop ?? error;
          this.failWith(error as DurableError);
        }
        throw error;
      }
    }
  }

  /**
   * Records a completed call at its position (the caller has claimed it), with the replies the
   * journal does not hold yet: a call's entry never lands without the reply that asked for it.
   */
  async record(entry: Omit<JournalEntryInput, "checkpointSeq">): Promise<void> {
    const own = this.full(entry);
    await this.writeCarrying((carried) => this.store.record(this.ctx.fence, [...carried, own]));
    this.counts.recorded[entry.kind]++;
  }

  /** `entry` of this visit. */
  full(entry: Omit<JournalEntryInput, "checkpointSeq">): JournalEntryInput {
    return { checkpointSeq: this.checkpointSeq, ...entry };
  }

  /**
   * A fenced journal write (see {@link write}) that depends on this attempt's replies: `work` gets
   * the entries of those the journal does not hold yet, to write in the same statement. No effect
   * is dispatched on an answer the journal does not hold.
   */
  writeCarrying<T>(work: (carried: JournalEntryInput[]) => Promise<T>): Promise<T> {
    return this.replies.carry((carried) => this.write(() => work(carried)));
  }

  /** Waits until the journal holds every reply of this attempt (see {@link ReplyEntries}). */
  flush(): Promise<void> {
    return this.replies.settled();
  }

  /** Counts a tool call recorded through the ledger (with its effect's outcome). */
  countRecordedTool(): void {
    this.counts.recorded.tool++;
  }

  /**
   * Parks the run: stops new calls at once, waits for the calls in flight (but `exclude`, the call
   * that asks) to be recorded, then makes the parking write. Always throws `run_parked`.
   */
  async park(reason: string, exclude: symbol | undefined, write: () => Promise<unknown>): Promise<never> {
    this.gate();
    const parked = new DurableError("run_parked", `Run ${this.ctx.runId} is parked: ${reason}.`, {
      details: { runId: this.ctx.runId, stepId: this.ctx.stepId },
    });
    this.stop = parked;
    const parking = (async () => {
      await Promise.allSettled([...this.inflight].filter(([key]) => key !== exclude).map(([, p]) => p));
      if (this.failure) return;
      await this.flush();
      await this.write(write);
      this.parked = true;
    })();
    this.parking = parking.catch(() => {});
    await parking;
    throw this.failure ?? parked;
  }

  /** Waits for the calls in flight and a park in progress (the step returned or threw meanwhile). */
  async settle(): Promise<void> {
    while (this.inflight.size > 0) await Promise.allSettled([...this.inflight.values()]);
    await this.parking;
  }

  /**
   * Asks for a human decision at `position`: a decided interrupt recorded there answers at once;
   * otherwise the interrupt is raised and the run parked `waiting` (this call then throws
   * `run_parked`, and the step is resumed through the journal once the decision arrives).
   */
  async ask(
    position: string,
    request: InterruptRequest,
    options: { readonly exclude?: symbol; readonly releaseEffectId?: string; readonly label: string },
  ): Promise<InterruptDecision> {
    this.gate();
    const checked = checkRequest(request);
    this.claim(position, options.label);
    const fingerprint = interruptFingerprint(checked.kind, checked.request, checked.schema);
    const known = this.asked.get(position);
    if (known) {
      if (known.fingerprint !== fingerprint)
        this.diverge(position, options.label, known.fingerprint, fingerprint);
      if (known.status === "decided" && known.decision) {
        this.counts.replayed.interrupt++;
        const { kind, actor, reason, payload } = known.decision;
        const delivered = await deliveredPayload(request.schema, payload);
        return {
          kind,
          actor,
          ...(reason !== undefined ? { reason } : {}),
          ...(delivered !== undefined ? { payload: delivered as JsonValue } : {}),
        };
      }
      if (known.status === "expired") {
        throw new DurableError("interrupt_timeout", `The ${options.label} expired without a decision.`, {
          details: { runId: this.ctx.runId, interruptId: known.id, retryable: false },
        });
      }
    }
    this.counts.recorded.interrupt++;
    return this.park(`waiting for a decision on the ${options.label}`, options.exclude, () =>
      this.store.raiseInterrupt(this.ctx.fence, {
        checkpointSeq: this.checkpointSeq,
        stepId: this.ctx.stepId,
        position,
        fingerprint,
        kind: checked.kind,
        request: checked.request,
        schema: checked.schema,
        timeoutMs: checked.timeoutMs,
        onTimeout: checked.onTimeout,
        ...(options.releaseEffectId ? { releaseEffectId: options.releaseEffectId } : {}),
      }),
    );
  }

  /** `ctx.interrupt` of the step itself: numbered in call order. */
  interrupt(request: InterruptRequest): Promise<InterruptDecision> {
    const n = this.stepInterrupts++;
    return this.ask(stepInterruptPosition(n), request, { label: `interrupt ${n + 1} of the step` });
  }

  private async model(call: ModelCall, next: () => Promise<ProviderResponse>): Promise<ProviderResponse> {
    this.gate();
    const position = modelPosition(call.position);
    const label = modelLabel(call.position);
    this.claim(position, label);
    const entry = this.entry(position, "model", call.fingerprint, label);
    if (entry) {
      call.observed?.note({ replayed: "journal", "journal.position": position });
      return entry.result as unknown as ProviderResponse;
    }
    return this.live(async () => {
      // The journal holds the previous reply before another call is paid for.
      await this.flush();
      const response = await next();
      // Journaled at once, not waited for: the turn's tools run while it is written.
      this.replies.add(
        this.full({
          position,
          kind: "model",
          fingerprint: call.fingerprint,
          label,
          result: response as unknown as JsonValue,
          ...(call.observed?.link ? { trace: call.observed.link } : {}),
        }),
      );
      this.counts.recorded.model++;
      return response;
    });
  }

  private tool(
    dispatch: ToolDispatch,
    next: (override?: ToolRunOverride) => Promise<ToolOutcome>,
  ): Promise<ToolOutcome> {
    this.gate();
    return runToolCall(this, dispatch, next);
  }

  private async journaled<T extends JsonValue>(name: string, fn: () => T | Promise<T>): Promise<T> {
    this.gate();
    if (typeof name !== "string" || name === "") {
      throw new DurableError("invalid_argument", "journal.run needs a non-empty name for the call.");
    }
    const n = this.stepCalls++;
    const position = stepCallPosition(n);
    const label = `journaled call ${n + 1} ("${name}") of the step`;
    this.claim(position, label);
    const fingerprint = callFingerprint(name);
    const entry = this.entry(position, "call", fingerprint, label);
    if (entry) return entry.result as T;
    return this.live(async () => {
      const value = await fn();
      if (!isJsonValue(value)) {
        throw new DurableError(
          "invalid_argument",
          `journal.run("${name}") must return JSON, got ${typeof value}.`,
        );
      }
      await this.record({ position, kind: "call", fingerprint, label, result: value });
      return value;
    });
  }
}
