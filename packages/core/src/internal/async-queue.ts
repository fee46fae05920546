/**
 * A push/pull queue bridging callbacks to an async iterator (for `agent.stream`). `onCancel` runs
 * when the consumer leaves before the end (a `break` or `return` in `for await`, or a throw).
 * A plain iterator object rather than an async generator: one promise per item, no generator hops.
 */
export class AsyncQueue<T> implements AsyncIterable<T> {
  private readonly items: T[] = [];
  private head = 0;
  private waiting: { resolve: (r: IteratorResult<T>) => void; reject: (e: unknown) => void } | undefined;
  private failure: { error: unknown } | undefined;
  private done = false;
  private cancelled = false;

  constructor(private readonly onCancel?: () => void) {}

  push(item: T): void {
    if (this.done) return;
    const waiter = this.waiting;
    if (waiter) {
      this.waiting = undefined;
      waiter.resolve({ value: item, done: false });
    } else this.items.push(item);
  }

  end(): void {
    if (this.done) return;
    this.done = true;
    const waiter = this.waiting;
    this.waiting = undefined;
    if (!waiter) return;
    if (this.failure) waiter.reject(this.failure.error);
    else waiter.resolve({ value: undefined, done: true });
  }

  fail(error: unknown): void {
    if (this.done) return;
    this.failure = { error };
    this.end();
  }

  [Symbol.asyncIterator](): AsyncIterator<T> {
    return {
      next: () => {
        if (this.head < this.items.length) {
          const value = this.items[this.head]!;
          this.items[this.head++] = undefined as T;
          if (this.head === this.items.length) {
            this.items.length = 0;
            this.head = 0;
          }
          return Promise.resolve({ value, done: false });
        }
        if (this.done || this.cancelled) {
          const failure = this.failure;
          this.failure = undefined;
          return failure ? Promise.reject(failure.error) : Promise.resolve({ value: undefined, done: true });
        }
        return new Promise((resolve, reject) => {
          this.waiting = { resolve, reject };
        });
      },
      return: () => {
        // The consumer left early: stop the producer and drop what it still sends.
        if (!this.done && !this.cancelled) {
          this.cancelled = true;
          this.done = true;
          this.items.length = 0;
          this.head = 0;
          this.onCancel?.();
        }
        return Promise.resolve({ value: undefined, done: true });
      },
    };
  }
}
