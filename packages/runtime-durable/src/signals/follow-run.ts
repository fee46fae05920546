import type { JsonValue } from "@openrath/core";
import { DurableError } from "../contract/durable-error.js";
import type { RunEvent, RunRecord } from "../contract/run-records.js";
import type { RunStoreV1 } from "../contract/run-store.js";
import type { Signal, SignalsV1 } from "../contract/signals.js";
import { isTerminal, type RunStatus } from "../contract/status.js";

/**
 * An ephemeral event of a run (a token delta, a progress tick): published live by a step with
 * `ctx.emitLive`, fanned out to the run's current subscribers, never stored. A subscriber that
 * joins later does not see it.
 */
export interface LiveRunEvent {
  readonly live: true;
  readonly runId: string;
  /** The durable sequence this live event follows: the run's last stored event when it was sent. */
  readonly after: number;
  readonly type: string;
  readonly data: JsonValue;
}

/** What {@link followRun} yields: stored events in sequence order, with live events among them. */
export type FollowedEvent = RunEvent | LiveRunEvent;

/** The payload `ctx.emitLive` puts in an `event` signal's `live` field. */
export interface LivePayload {
  readonly type: string;
  readonly data?: JsonValue;
}

/** Options of {@link followRun}. */
export interface FollowRunOptions {
  /** Start after this stored sequence (default 0: from the first event). */
  readonly after?: number;
  readonly signal?: AbortSignal;
  /** End when the run parks (`waiting`, `needs_review`) as well as when it ends. */
  readonly parked?: boolean;
  /** Yield live events (default true); false yields stored events only. */
  readonly live?: boolean;
  /**
   * A re-read of the store after this long without any signal (default 10 000 ms): the floor that
   * covers a signal lost while a connection was away. It is not a polling loop; signals wake the
   * follower first.
   */
  readonly safetyMs?: number;
}

const PAGE = 1000;
/** The longest a follower waits, after the run's last event, for live events still in flight. */
const LIVE_DRAIN_MS = 2000;

/** The status an event moved the run to (`run.state.changed`, `run.claimed`, …), if it says. */
function statusAfter(event: RunEvent): RunStatus | undefined {
  const to = (event.data as { to?: unknown } | null)?.to;
  return typeof to === "string" ? (to as RunStatus) : undefined;
}

function isLivePayload(value: unknown): value is LivePayload {
  return typeof value === "object" && value !== null && typeof (value as LivePayload).type === "string";
}

/**
 * Follows one run: first the stored events after `after` (read from the store), then, as signals
 * arrive, the events committed since and the live ones, with no gap and no duplicate. Stored
 * events come in sequence order exactly once: a signal only says "there is more after seq N", and
 * the follower reads from the store after the last sequence it yielded. A live event that follows
 * stored events this follower has not read yet is yielded after them. With a backend that carries
 * no live payloads (`capabilities.livePayloads: false`, such as PostgreSQL `LISTEN/NOTIFY`), only
 * stored events are yielded. Ends after the event that makes the run terminal (or parked, with
 * `parked: true`).
 *
 * Subscribe-then-read: the follower subscribes before its first read, so an event committed
 * between the two is signalled and read, never skipped.
 *
 * @throws {DurableError} `run_not_found`; the signal's reason when `signal` fires.
 */
export async function* followRun(
  store: RunStoreV1,
  signals: SignalsV1,
  runId: string,
  options: FollowRunOptions = {},
): AsyncGenerator<FollowedEvent> {
  const wantLive = options.live !== false;
  const safetyMs = options.safetyMs ?? 10_000;
  const ends = (status: RunStatus | undefined) =>
    status !== undefined &&
    (isTerminal(status) || (options.parked === true && (status === "waiting" || status === "needs_review")));
  let last = options.after ?? 0;
  let ended = false;
  // The highest sequence any signal has announced: with live payloads, the signal announcing the
  // run's last event comes after the live events published before it (one ordered channel), so
  // the follower waits for it before ending.
  let announced = 0;
  const inbox: Signal[] = [];
  let wake: (() => void) | undefined;
  const poke = () => {
    const w = wake;
    wake = undefined;
    w?.();
  };
  const stop = await signals.subscribe(`run:${runId}`, (signal) => {
    if (signal.kind !== "event") return;
    if (signal.live === undefined && signal.seq > announced) announced = signal.seq;
    inbox.push(signal);
    poke();
  });
  options.signal?.addEventListener("abort", poke);

  const checkRun = async (): Promise<RunRecord> => {
    const run = await store.getRun(runId);
    if (!run) throw new DurableError("run_not_found", `No run ${runId}.`, { details: { runId } });
    return run;
  };
  // Reads every stored event after `last`, page by page; notes when one of them ends the follow.
  async function* catchUp(): AsyncGenerator<RunEvent> {
    for (;;) {
      const events = await store.readEvents(runId, { after: last, limit: PAGE });
      for (const event of events) {
        if (event.seq <= last) continue;
        last = event.seq;
        if (ends(statusAfter(event))) ended = true;
        yield event;
        if (ended) return;
      }
      if (events.length < PAGE) return;
    }
  }

  const drainLive = async function* (): AsyncGenerator<LiveRunEvent> {
    if (!wantLive || !signals.capabilities.livePayloads) return;
    const deadline = Date.now() + Math.min(safetyMs, LIVE_DRAIN_MS);
    for (;;) {
      for (const signal of inbox.splice(0)) {
        if (signal.kind === "event" && signal.live !== undefined && isLivePayload(signal.live))
          yield liveEvent(signal.seq, signal.live);
      }
      if (announced >= last || Date.now() >= deadline) return;
      let timer: NodeJS.Timeout | undefined;
      await new Promise<void>((resolve) => {
        wake = resolve;
        timer = setTimeout(resolve, Math.max(1, deadline - Date.now()));
      });
      clearTimeout(timer);
      wake = undefined;
    }
  };
  const liveEvent = (after: number, payload: LivePayload): LiveRunEvent => ({
    live: true,
    runId,
    after,
    type: payload.type,
    data: payload.data ?? null,
  });

  try {
    const run = await checkRun();
    yield* catchUp();
    if (ended) {
      yield* drainLive();
      return;
    }
    if (ends(run.status) && run.eventSeq <= last) return;
    for (;;) {
      options.signal?.throwIfAborted();
      if (inbox.length === 0) {
        let timer: NodeJS.Timeout | undefined;
        const timedOut = await new Promise<boolean>((resolve) => {
          wake = () => resolve(false);
          timer = setTimeout(() => resolve(true), safetyMs);
          timer.unref?.();
        });
        clearTimeout(timer);
        wake = undefined;
        options.signal?.throwIfAborted();
        if (timedOut) {
          const now = await checkRun();
          yield* catchUp();
          if (ended) yield* drainLive();
          if (ended || (ends(now.status) && now.eventSeq <= last)) return;
          continue;
        }
      }
      while (inbox.length > 0) {
        const signal = inbox.shift()!;
        if (signal.kind !== "event") continue;
        if (signal.live !== undefined) {
          if (!wantLive || !isLivePayload(signal.live)) continue;
          // The stored events this live one follows come first.
          if (signal.seq > last) yield* catchUp();
          yield liveEvent(signal.seq, signal.live);
        } else if (signal.seq > last || signal.seq < 0) {
          // seq < 0: a backend reconnected and may have missed signals; read to be sure.
          yield* catchUp();
        }
        if (ended) {
          yield* drainLive();
          return;
        }
      }
    }
  } finally {
    options.signal?.removeEventListener("abort", poke);
    await stop();
  }
}
