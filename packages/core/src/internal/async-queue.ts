/**
 * A push/pull queue bridging callbacks to an async iterator (for `agent.stream`). `onCancel` runs
 * when the consumer leaves before the end (a `break` or `return` in `for await`, or a throw).
 */
export class AsyncQueue<T> implements AsyncIterable<T> {
  private readonly items: T[] = [];
  private waiting: ((result: IteratorResult<T>) => void) | undefined;
  private failure: { error: unknown } | undefined;
  private done = false;

  constructor(private readonly onCancel?: () => void) {}

  push(item: T): void {
    if (this.done) return;
    const waiter = this.waiting;
    if (waiter) {
      this.waiting = undefined;
      waiter({ value: item, done: false });
    } else this.items.push(item);
  }

  end(): void {
    this.done = true;
    this.waiting?.({ value: undefined, done: true });
    this.waiting = undefined;
  }

  fail(error: unknown): void {
    this.failure = { error };
    this.end();
  }

  async *[Symbol.asyncIterator](): AsyncIterator<T> {
    let finished = false;
    try {
      while (true) {
        if (this.items.length > 0) {
          yield this.items.shift()!;
          continue;
        }
        if (this.done) {
          finished = true;
          if (this.failure) throw this.failure.error;
          return;
        }
        const next = await new Promise<IteratorResult<T>>((resolve) => {
          this.waiting = resolve;
        });
        if (next.done) {
          finished = true;
          if (this.failure) throw this.failure.error;
          return;
        }
        yield next.value;
      }
    } finally {
      if (!finished) {
        // The consumer left early: stop the producer and drop what it still sends.
        this.done = true;
        this.items.length = 0;
        this.onCancel?.();
      }
    }
  }
}
