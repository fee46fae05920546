import { type CheckpointWrite, PREVIOUS_CHECKPOINT, type RunRecord } from "../contract/run-records.js";

/** The most step commits one batch carries (and the most a run's steps get ahead of its commits). */
export const MAX_BATCH = 32;

/**
 * The step commits of one run on one worker, written behind the steps: a step's checkpoint is
 * sent at once when no commit of the run is in flight, and the steps that finish while one is
 * are sent together when it returns, as one transaction (`GroupCommitV1.commitSteps`). So the next
 * step does not wait for the database, and a run of fast steps costs one round trip per batch,
 * not per step. Commits stay in sequence order; the first refused one stops the pipeline, and
 * every later `add` and `settled` rejects with its error.
 *
 * A write encoded against a checkpoint not committed yet names {@link PREVIOUS_CHECKPOINT} as its
 * base; the first write of a batch gets the real id (its base is committed by then).
 */
export class CommitPipeline {
  private queue: CheckpointWrite[] = [];
  private inflight: Promise<void> | null = null;
  private failure: { readonly error: unknown } | undefined;

  /**
   * @param send commits a batch (one write, or several when `batches` is true) and returns the run.
   * @param committed told of the run after each batch, before the next is sent.
   * @param lastId the id of the run's last committed checkpoint.
   * @param refused told of the error when a commit is refused (the step running then is to stop).
   */
  constructor(
    private readonly send: (writes: readonly CheckpointWrite[]) => Promise<RunRecord>,
    private readonly committed: (run: RunRecord) => void,
    private lastId: number,
    private readonly batches: boolean,
    private readonly refused: (error: unknown) => void = () => {},
  ) {}

  /** Whether a commit is in flight or queued. */
  get busy(): boolean {
    return this.inflight !== null || this.queue.length > 0;
  }

  /**
   * Queues `write` (its sequence follows the last one queued). Resolves once there is room for the
   * next step: at once, unless a full batch is already waiting.
   */
  async add(write: CheckpointWrite): Promise<void> {
    this.check();
    this.queue.push(write);
    if (this.inflight === null) this.pump();
    while (this.queue.length >= this.limit && this.inflight !== null) await this.inflight;
    this.check();
  }

  /** Resolves once everything queued is committed; rejects with the error of a refused commit. */
  async settled(): Promise<void> {
    while (this.inflight !== null) await this.inflight;
    this.check();
  }

  private check(): void {
    if (this.failure) throw this.failure.error;
  }

  /** `write` with its base resolved when it is the last committed checkpoint. */
  resolve(write: CheckpointWrite): CheckpointWrite {
    return write.baseId === PREVIOUS_CHECKPOINT ? { ...write, baseId: this.lastId } : write;
  }

  private get limit(): number {
    return this.batches ? MAX_BATCH : 1;
  }

  private pump(): void {
    const batch = this.queue.splice(0, this.limit);
    batch[0] = this.resolve(batch[0]!);
    this.inflight = this.commit(batch);
  }

  private async commit(batch: readonly CheckpointWrite[]): Promise<void> {
    try {
      const run = await this.send(batch);
      this.lastId = run.checkpointId;
      this.committed(run);
    } catch (error) {
      this.failure = { error };
      this.queue = [];
      this.refused(error);
    }
    this.inflight = null;
    if (this.queue.length > 0) this.pump();
  }
}
