/**
 * Group commit for one kind of write: a call made while `parallel` batches are in flight waits and
 * goes out with the calls that queued beside it, as one batch of at most `max`. A call made when a
 * slot is free goes out at once (in the same turn of the event loop as any calls made beside it),
 * so a write alone costs what it did unbatched, and writes under load share round trips.
 *
 * `send` answers each item with its result or the error that item alone gets. When `send` rejects
 * for a batch of several, each of its items is sent again alone, so one bad item cannot fail the
 * others; a batch of one gets the rejection.
 */
export class Batcher<I, O> {
  private queue: { item: I; resolve: (value: O) => void; reject: (error: unknown) => void }[] = [];
  private inFlight = 0;
  private scheduled = false;

  constructor(
    private readonly send: (items: readonly I[]) => Promise<(O | Error)[]>,
    private readonly max: number,
    private readonly parallel = 1,
  ) {}

  call(item: I): Promise<O> {
    return new Promise<O>((resolve, reject) => {
      this.queue.push({ item, resolve, reject });
      if (this.inFlight < this.parallel && !this.scheduled) {
        this.scheduled = true;
        queueMicrotask(() => {
          this.scheduled = false;
          this.drain();
        });
      }
    });
  }

  private drain(): void {
    while (this.inFlight < this.parallel && this.queue.length > 0) {
      const batch = this.queue.splice(0, this.max);
      this.inFlight++;
      this.dispatch(batch).finally(() => {
        this.inFlight--;
        this.drain();
      });
    }
  }

  private async dispatch(batch: typeof this.queue): Promise<void> {
    let outcomes: (O | Error)[];
    try {
      outcomes = await this.send(batch.map((b) => b.item));
    } catch (error) {
      if (batch.length === 1) {
        batch[0]!.reject(error);
        return;
      }
      await Promise.all(batch.map((b) => this.dispatch([b])));
      return;
    }
    batch.forEach((b, i) => {
      const outcome = outcomes[i] as O | Error;
      if (outcome instanceof Error) b.reject(outcome);
      else b.resolve(outcome);
    });
  }
}
