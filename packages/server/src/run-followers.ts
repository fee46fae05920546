import {
  type DurableRuntime,
  type FollowedEvent,
  followRun,
  isTerminal,
  type RunEvent,
  type RunStatus,
  type RunStoreV1,
} from "@openrath/runtime-durable";

/** What {@link RunFollowers} needs of the runtime: its follow of one run, and the store for gaps. */
export interface FollowSource {
  readonly store: Pick<RunStoreV1, "readEvents">;
  stream: DurableRuntime["stream"];
}

/**
 * The runtime's follow of a run without its tenant check (`runtime.stream` reads the run once more
 * for it): {@link RunFollowers.follow}'s callers have read the run in the principal's tenant.
 */
export function followSourceOf(runtime: Pick<DurableRuntime, "store" | "signals">): FollowSource {
  return {
    store: runtime.store,
    stream: (runId, { tenantId: _checked, ...options } = {}) =>
      followRun(runtime.store, runtime.signals, runId, options),
  };
}

/** Options of {@link RunFollowers}. */
export interface RunFollowersOptions {
  /** Recent stored events a shared follow keeps, so a follower a little behind joins without a store read (default 500). */
  readonly bufferSize?: number;
  /** Events a follower may have waiting; one more ends it with {@link FollowerLagged} (default 1000). */
  readonly queueSize?: number;
}

/** Options of {@link RunFollowers.follow}. The caller has checked the principal may see the run. */
export interface JoinOptions {
  /** Start after this stored sequence. */
  readonly after: number;
  readonly tenantId: string;
  /** End when the run parks (`waiting`, `needs_review`) as well as when it ends. */
  readonly parked?: boolean;
  /** The run as the caller read it: when its status ends this follower, the follow ends at its last event. */
  readonly run?: {
    readonly status: RunStatus;
    readonly eventSeq: number;
    /** Kept by a shared follow this starts, for {@link RunFollowers.projectOf}. */
    readonly projectId?: string | null;
  };
  readonly signal?: AbortSignal;
}

/** A follower fell `queueSize` events behind: its stream ends, and it reconnects with `Last-Event-ID`. */
export class FollowerLagged extends Error {
  constructor() {
    super("The stream fell behind the run's events; reconnect with Last-Event-ID.");
  }
}

const PAGE = 1000;

function statusAfter(event: RunEvent): RunStatus | undefined {
  const to = (event.data as { to?: unknown } | null)?.to;
  return typeof to === "string" ? (to as RunStatus) : undefined;
}

/** One follower's bounded queue: the shared follow pushes, the follower's stream pulls. */
class Follower {
  private readonly queue: FollowedEvent[] = [];
  private wake: (() => void) | undefined;
  private ended = false;
  private failure: unknown;

  constructor(
    /** The highest stored sequence queued so far: older ones are not queued again. */
    private through: number,
    private readonly limit: number,
    private readonly signal: AbortSignal | undefined,
  ) {}

  /** Queues `event`; false when the queue is full, and the follower has then failed. */
  push(event: FollowedEvent): boolean {
    if (!("live" in event)) {
      if (event.seq <= this.through) return true;
      this.through = event.seq;
    }
    if (this.queue.length >= this.limit) {
      this.queue.length = 0;
      this.end(new FollowerLagged());
      return false;
    }
    this.queue.push(event);
    this.poke();
    return true;
  }

  /** Marks every stored event up to `seq` as seen (read from the store before joining). */
  seen(seq: number): void {
    if (seq > this.through) this.through = seq;
  }

  end(failure?: unknown): void {
    this.ended = true;
    this.failure ??= failure;
    this.poke();
  }

  poke = (): void => {
    const wake = this.wake;
    this.wake = undefined;
    wake?.();
  };

  /** The next event, or `undefined` once the follow has ended and the queue is empty. */
  async next(): Promise<FollowedEvent | undefined> {
    for (;;) {
      this.signal?.throwIfAborted();
      if (this.failure !== undefined) throw this.failure;
      const event = this.queue.shift();
      if (event) return event;
      if (this.ended) return undefined;
      await new Promise<void>((resolve) => {
        this.wake = resolve;
      });
    }
  }
}

/** One follow of a run's store events, fanned out to every follower of the run in this process. */
class SharedTail {
  /** The highest stored sequence the follow has read. */
  private last: number;
  /** The most recent stored events, contiguous and ending at `last`. */
  private readonly buffer: RunEvent[] = [];
  private readonly followers = new Set<Follower>();
  private readonly abort = new AbortController();
  done = false;

  constructor(
    private readonly start: number,
    private readonly bufferSize: number,
    /** The run's project, when the follower that started this follow knew it. */
    readonly projectId: string | null | undefined,
    private readonly onDone: () => void,
  ) {
    this.last = start;
  }

  run(source: FollowSource, runId: string, tenantId: string): void {
    const events = source.stream(runId, { after: this.start, tenantId, signal: this.abort.signal });
    void (async () => {
      try {
        for await (const event of events) {
          if (!("live" in event)) {
            if (event.seq <= this.last) continue;
            this.last = event.seq;
            this.buffer.push(event);
            if (this.buffer.length > this.bufferSize) this.buffer.shift();
          }
          for (const follower of this.followers) if (!follower.push(event)) this.followers.delete(follower);
          if (this.followers.size === 0) break;
        }
        this.finish();
      } catch (error) {
        this.finish(this.abort.signal.aborted ? undefined : error);
      }
    })();
  }

  /** Adds `follower` at cursor `after` if the buffer covers what it has not seen (synchronously, so no event falls between). */
  admit(follower: Follower, after: number): boolean {
    const floor = this.buffer.length > 0 ? this.buffer[0]!.seq - 1 : this.last;
    if (after < floor) return false;
    follower.seen(after);
    for (const event of this.buffer) if (!follower.push(event)) return true;
    this.followers.add(follower);
    return true;
  }

  leave(follower: Follower): void {
    this.followers.delete(follower);
    if (this.followers.size === 0) this.finish();
  }

  finish(failure?: unknown): void {
    if (!this.done) {
      this.done = true;
      this.onDone();
      this.abort.abort(new Error("no followers left"));
    }
    for (const follower of this.followers) follower.end(failure);
    this.followers.clear();
  }
}

/**
 * The followers of runs in one server process, sharing one follow of the store per run: the
 * first follower starts it at its cursor; one further behind than the shared buffer reads its gap
 * from the store first, then joins. A follower whose queue overflows ends with
 * {@link FollowerLagged} and never holds up the others. The follow stops with its last follower
 * or when the run ends.
 */
export class RunFollowers {
  private readonly tails = new Map<string, SharedTail>();
  private readonly bufferSize: number;
  private readonly queueSize: number;

  constructor(
    private readonly source: FollowSource,
    options: RunFollowersOptions = {},
  ) {
    this.bufferSize = options.bufferSize ?? 500;
    this.queueSize = Math.max(options.queueSize ?? 1000, this.bufferSize);
  }

  /** Runs with a shared follow open now. */
  get size(): number {
    return this.tails.size;
  }

  /**
   * The project (or `null`) of a run with a shared follow open in `tenantId`, as the read of the
   * follower that started it found it; `undefined` when there is none or it is not known. A run
   * is followed in a tenant only after a read in that tenant found it, so a caller may take this
   * for its own visibility read.
   */
  projectOf(tenantId: string, runId: string): string | null | undefined {
    return this.tails.get(`${tenantId}\u0000${runId}`)?.projectId;
  }

  /**
   * The run's events after `options.after`, as {@link DurableRuntime.stream} yields them.
   *
   * @throws {FollowerLagged} when this follower's queue overflows; the follow's error; the
   *   signal's reason when it fires.
   */
  async *follow(runId: string, options: JoinOptions): AsyncGenerator<FollowedEvent> {
    const ends = (status: RunStatus | undefined) =>
      status !== undefined &&
      (isTerminal(status) ||
        (options.parked === true && (status === "waiting" || status === "needs_review")));
    const endAt = options.run && ends(options.run.status) ? options.run.eventSeq : Number.POSITIVE_INFINITY;
    let cursor = options.after;
    if (cursor >= endAt) return;
    const key = `${options.tenantId}\u0000${runId}`;
    let tail: SharedTail | undefined;
    const follower = new Follower(cursor, this.queueSize, options.signal);
    options.signal?.addEventListener("abort", follower.poke);
    try {
      // Caught up from the store first, so a follow it starts pushes no backlog into its queue;
      // unless the caller's read of the active run shows a backlog the shared buffer would hold:
      // then the follow it starts reads it (one store read fewer per stream).
      const backlog = options.run ? options.run.eventSeq - cursor : -1;
      let caughtUp = endAt === Number.POSITIVE_INFINITY && backlog >= 0 && backlog <= this.bufferSize;
      let empty = false;
      for (;;) {
        tail = this.tails.get(key);
        if (!tail && caughtUp)
          tail = this.startTail(key, runId, options.tenantId, cursor, options.run?.projectId);
        if (tail?.admit(follower, cursor)) break;
        if (tail && empty) {
          // The shared follow started past the run's last event (a cursor from the future): follow alone.
          tail = undefined;
          const { tenantId, parked, signal } = options;
          for await (const event of this.source.stream(runId, { after: cursor, tenantId, parked, signal })) {
            yield event;
            if (!("live" in event) && event.seq >= endAt) return;
          }
          return;
        }
        tail = undefined;
        // Behind the shared buffer, or no follow yet: this follower's gap comes from the store.
        const events = await this.source.store.readEvents(runId, { after: cursor, limit: PAGE });
        caughtUp = events.length < PAGE;
        empty = events.length === 0;
        for (const event of events) {
          if (event.seq <= cursor) continue;
          cursor = event.seq;
          yield event;
          if (ends(statusAfter(event)) || cursor >= endAt) return;
        }
        options.signal?.throwIfAborted();
      }
      for (;;) {
        const event = await follower.next();
        if (!event) return;
        yield event;
        if (!("live" in event) && (ends(statusAfter(event)) || event.seq >= endAt)) return;
      }
    } finally {
      options.signal?.removeEventListener("abort", follower.poke);
      tail?.leave(follower);
    }
  }

  private startTail(
    key: string,
    runId: string,
    tenantId: string,
    after: number,
    projectId: string | null | undefined,
  ): SharedTail {
    const tail = new SharedTail(after, this.bufferSize, projectId, () => {
      if (this.tails.get(key) === tail) this.tails.delete(key);
    });
    this.tails.set(key, tail);
    tail.run(this.source, runId, tenantId);
    return tail;
  }

  /** Ends every follow and its followers (the server is closing). */
  close(): void {
    for (const tail of [...this.tails.values()]) tail.finish();
  }
}
