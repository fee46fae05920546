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
  if (!signal) return promise;
  if (signal.aborted) {
    promise.catch(() => {});
    return Promise.reject(onAbort());
  }
  return new Promise<T>((resolve, reject) => {
    const abort = () => reject(onAbort());
    signal.addEventListener("abort", abort, { once: true });
    promise.then(
      (value) => {
        signal.removeEventListener("abort", abort);
        resolve(value);
      },
      (error) => {
        signal.removeEventListener("abort", abort);
        reject(error);
      },
    );
  });
}

/**
 * Reads an async iterator with one abort listener for the whole read (not one per item): `next()`
 * rejects with `onAbort()` as soon as `signal` fires, even if the iterator never settles, and asks
 * the iterator to wind down without waiting for it. Call `close()` when done.
 */
export class AbortableReader<T> {
  private reject: ((error: unknown) => void) | undefined;
  private readonly onAbortEvent: (() => void) | undefined;

  constructor(
    private readonly iterator: AsyncIterator<T>,
    private readonly signal: AbortSignal | undefined,
    private readonly onAbort: () => unknown,
  ) {
    if (signal) {
      this.onAbortEvent = () => {
        void Promise.resolve(iterator.return?.()).catch(() => {});
        this.reject?.(onAbort());
      };
      signal.addEventListener("abort", this.onAbortEvent, { once: true });
    }
  }

  next(): Promise<IteratorResult<T>> {
    if (!this.signal) return this.iterator.next();
    if (this.signal.aborted) return Promise.reject(this.onAbort());
    return new Promise((resolve, reject) => {
      this.reject = reject;
      this.iterator.next().then(resolve, reject);
    });
  }

  close(): void {
    if (this.onAbortEvent) this.signal!.removeEventListener("abort", this.onAbortEvent);
    this.reject = undefined;
  }
}

/**
 * Races many promises against one signal with a single listener (registered on first use, removed
 * by `close()`): an agent run races every tool call this way instead of adding a listener per call.
 */
export class AbortWatch {
  private readonly pending = new Set<(error: unknown) => void>();
  private listening = false;
  private readonly onAbortEvent = () => {
    for (const reject of this.pending) reject(this.onAbort());
    this.pending.clear();
  };

  constructor(
    private readonly signal: AbortSignal,
    private readonly onAbort: () => unknown,
  ) {}

  /** `promise`, or a rejection with `onAbort()` as soon as the signal fires. */
  race<T>(promise: Promise<T>): Promise<T> {
    if (this.signal.aborted) {
      promise.catch(() => {});
      return Promise.reject(this.onAbort());
    }
    if (!this.listening) {
      this.listening = true;
      this.signal.addEventListener("abort", this.onAbortEvent, { once: true });
    }
    return new Promise<T>((resolve, reject) => {
      this.pending.add(reject);
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

  /** Removes the listener. */
  close(): void {
    if (this.listening) this.signal.removeEventListener("abort", this.onAbortEvent);
    this.listening = false;
  }
}
