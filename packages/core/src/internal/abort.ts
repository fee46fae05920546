/**
 * Races promises against an AbortSignal with one listener per signal, shared by every race on it
 * (an agent run races each model call, each streamed delta and each tool call): Node's
 * `addEventListener` costs far more than a race, and a signal reused for many runs would otherwise
 * collect listeners. The watch lives as long as its signal (a WeakMap keyed by it).
 */
class AbortWatch {
  private readonly pending = new Map<(error: unknown) => void, () => unknown>();

  constructor(signal: AbortSignal) {
    signal.addEventListener(
      "abort",
      () => {
        for (const [reject, onAbort] of this.pending) reject(onAbort());
        this.pending.clear();
      },
      { once: true },
    );
  }

  race<T>(promise: Promise<T>, onAbort: () => unknown): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      this.pending.set(reject, onAbort);
      promise.then(
        (value) => {
          this.pending.delete(reject);
          resolve(value);
        },
        (error) => {
          this.pending.delete(reject);
          reject(error);
        },
      );
    });
  }
}

const watches = new WeakMap<AbortSignal, AbortWatch>();
const unraced = new WeakSet<AbortSignal>();

/**
 * Marks `signal` as one nobody waits on when it fires — a stream's own signal, fired when its
 * consumer stops reading — so races against it are skipped: the work in flight still gets the
 * abort (cooperative providers and tools stop), and the run stops before its next call.
 */
export function unracedSignal(signal: AbortSignal): AbortSignal {
  unraced.add(signal);
  return signal;
}

/** Whether races against `signal` are run (there is a signal, and it is not {@link unracedSignal}'s). */
export function racesOn(signal: AbortSignal | undefined): signal is AbortSignal {
  return signal !== undefined && !unraced.has(signal);
}

/**
 * A controller of the caller's own that also fires when `outer` does (with its reason): work that
 * stops on either side, such as a stream its consumer may leave. `unlink` drops the listener on
 * `outer` once the work is over.
 */
export function linkedController(outer: AbortSignal | undefined): {
  readonly controller: AbortController;
  unlink(): void;
} {
  const controller = new AbortController();
  const forward = () => controller.abort(outer?.reason);
  if (outer?.aborted) forward();
  else outer?.addEventListener("abort", forward, { once: true });
  return { controller, unlink: () => outer?.removeEventListener("abort", forward) };
}

/**
 * `promise`, or a rejection with `onAbort()` as soon as `signal` fires, whichever comes first: an
 * abort returns promptly even when the work behind `promise` ignores the signal. Without a signal,
 * `promise` itself.
 */
export function raceAbort<T>(
  promise: Promise<T>,
  signal: AbortSignal | undefined,
  onAbort: () => unknown,
): Promise<T> {
  if (!signal || unraced.has(signal)) return promise;
  if (signal.aborted) {
    promise.catch(() => {});
    return Promise.reject(onAbort());
  }
  let watch = watches.get(signal);
  if (!watch) {
    watch = new AbortWatch(signal);
    watches.set(signal, watch);
  }
  return watch.race(promise, onAbort);
}

/**
 * Reads an async iterator so that `next()` rejects with `onAbort()` as soon as `signal` fires,
 * even if the iterator never settles, and asks the iterator to wind down without waiting for it.
 */
export class AbortableReader<T> {
  private readonly aborted: () => unknown;

  constructor(
    private readonly iterator: AsyncIterator<T>,
    private readonly signal: AbortSignal | undefined,
    onAbort: () => unknown,
  ) {
    this.aborted = () => {
      void Promise.resolve(iterator.return?.()).catch(() => {});
      return onAbort();
    };
  }

  next(): Promise<IteratorResult<T>> {
    return raceAbort(this.iterator.next(), this.signal, this.aborted);
  }
}
