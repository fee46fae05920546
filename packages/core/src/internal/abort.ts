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
