import type { JournalEntryInput } from "../contract/journal-records.js";

/** A model call's reply whose entry the journal does not hold yet. */
interface Reply {
  readonly entry: JournalEntryInput;
  /** Writes in flight that carry the entry. */
  carriers: number;
  /** Its own write was sent. */
  sent: boolean;
  /** Resolves once the journal holds the entry; rejects when its own write failed. */
  readonly held: Promise<void>;
  resolve(): void;
  reject(error: unknown): void;
}

/**
 * The model replies of one step attempt on their way to the journal (ADR 0016, its amendment of
 * issue 21: written when it arrives). A reply's entry is sent in a write of its own at the end of the
 * event-loop turn it arrived in — before the loop can wait on anything, so the turn's tools run
 * while it is written and a crash during them does not pay for the call again. A write that
 * depends on the reply (a tool call's outcome, an effect's dispatch) carries the entry in its own
 * statement until the journal holds it; a tool that finishes within the same turn thus takes the
 * entry along and the turn costs no extra statement.
 */
export class ReplyEntries {
  private replies: Reply[] = [];

  /** `writeOwn` writes one entry on its own (fenced, retried as every journal write). */
  constructor(private readonly writeOwn: (entry: JournalEntryInput) => Promise<void>) {}

  /** A reply arrived: its entry is written at the end of this event-loop turn unless a write takes it along first. */
  add(entry: JournalEntryInput): void {
    let resolve!: () => void;
    let reject!: (error: unknown) => void;
    const held = new Promise<void>((res, rej) => {
      resolve = res;
      reject = rej;
    });
    // Whoever depends on the entry sees the error (`settled`); it is never left unobserved.
    held.catch(() => {});
    const reply: Reply = { entry, carriers: 0, sent: false, held, resolve, reject };
    this.replies.push(reply);
    setImmediate(() => this.send(reply));
  }

  /**
   * Runs `write` (a journal write that depends on the replies so far) with the entries the journal
   * does not hold yet, which it writes in the same statement. If it fails, the entries it was to
   * carry go out on their own.
   */
  async carry<T>(write: (entries: JournalEntryInput[]) => Promise<T>): Promise<T> {
    const carried = [...this.replies];
    for (const reply of carried) reply.carriers++;
    try {
      const result = await write(carried.map((r) => r.entry));
      this.hold(carried);
      return result;
    } catch (error) {
      for (const reply of carried) {
        reply.carriers--;
        this.send(reply);
      }
      throw error;
    }
  }

  /**
   * Waits until the journal holds every reply so far; throws the error of a reply's own write when
   * no other write holds its entry.
   */
  async settled(): Promise<void> {
    while (this.replies.length > 0) {
      const waiting = [...this.replies];
      const results = await Promise.allSettled(waiting.map((r) => r.held));
      const lost = results.findIndex((r, i) => r.status === "rejected" && this.replies.includes(waiting[i]!));
      if (lost >= 0) throw (results[lost] as PromiseRejectedResult).reason;
    }
  }

  private send(reply: Reply): void {
    if (reply.sent || reply.carriers > 0 || !this.replies.includes(reply)) return;
    reply.sent = true;
    this.writeOwn(reply.entry).then(
      () => this.hold([reply]),
      (error: unknown) => reply.reject(error),
    );
  }

  private hold(replies: readonly Reply[]): void {
    if (replies.length === 0) return;
    const done = new Set(replies);
    this.replies = this.replies.filter((r) => !done.has(r));
    for (const reply of replies) reply.resolve();
  }
}
