import { describe, expect, it } from "vitest";
import { DurableError } from "../contract/durable-error.js";
import { type CheckpointWrite, PREVIOUS_CHECKPOINT, type RunRecord } from "../contract/run-records.js";
import { CommitPipeline, MAX_BATCH } from "./commit-pipeline.js";

const write = (sequence: number, baseId: number | null = PREVIOUS_CHECKPOINT): CheckpointWrite => ({
  sequence,
  sessionId: "s",
  baseId,
  chunkOps: [],
  newChunks: [],
  lineage: [],
  placement: null,
  stepId: `s${sequence - 1}`,
  nextStep: `s${sequence}`,
});

/** A store stand-in whose commits resolve when the test says so; ids are 100 + sequence. */
function fakeSends() {
  const sent: { writes: readonly CheckpointWrite[]; done: (error?: Error) => void }[] = [];
  const send = (writes: readonly CheckpointWrite[]) =>
    new Promise<RunRecord>((resolve, reject) => {
      sent.push({
        writes,
        done: (error) =>
          error
            ? reject(error)
            : resolve({
                checkpointId: 100 + writes.at(-1)!.sequence,
                eventSeq: writes.at(-1)!.sequence,
              } as RunRecord),
      });
    });
  return { sent, send };
}

const tick = () => new Promise((r) => setTimeout(r, 0));

describe("CommitPipeline", () => {
  it("sends the first commit at once and batches the steps that finish while it is in flight, in order", async () => {
    const { sent, send } = fakeSends();
    const committed: number[] = [];
    const pipeline = new CommitPipeline(send, (run) => committed.push(run.checkpointId), 100, true);
    await pipeline.add(write(1));
    await pipeline.add(write(2));
    await pipeline.add(write(3));
    expect(sent.map((s) => s.writes.map((w) => w.sequence))).toEqual([[1]]);
    // The first write of a batch gets the id of the last committed checkpoint as its base.
    expect(sent[0]!.writes[0]!.baseId).toBe(100);
    sent[0]!.done();
    await tick();
    expect(sent.map((s) => s.writes.map((w) => w.sequence))).toEqual([[1], [2, 3]]);
    expect(sent[1]!.writes.map((w) => w.baseId)).toEqual([101, PREVIOUS_CHECKPOINT]);
    const settled = pipeline.settled();
    sent[1]!.done();
    await settled;
    expect(committed).toEqual([101, 103]);
    expect(pipeline.busy).toBe(false);
    expect(pipeline.resolve(write(4))).toMatchObject({ baseId: 103 });
    expect(pipeline.resolve(write(4, null))).toMatchObject({ baseId: null });
  });

  it("holds a step back once a full batch waits, and commits one step at a time without batches", async () => {
    const { sent, send } = fakeSends();
    const pipeline = new CommitPipeline(send, () => {}, 1, true);
    await pipeline.add(write(1));
    for (let i = 2; i <= MAX_BATCH; i++) await pipeline.add(write(i));
    let added = false;
    const full = pipeline.add(write(MAX_BATCH + 1)).then(() => (added = true));
    await tick();
    expect(added).toBe(false);
    sent[0]!.done();
    await full;
    expect(sent[1]!.writes).toHaveLength(MAX_BATCH);

    const single = fakeSends();
    const one = new CommitPipeline(single.send, () => {}, 1, false);
    await one.add(write(1));
    let second = false;
    const p = one.add(write(2)).then(() => (second = true));
    await tick();
    expect(second).toBe(false);
    single.sent[0]!.done();
    await p;
    expect(single.sent.map((s) => s.writes.length)).toEqual([1, 1]);
  });

  it("stops at the first refused commit: later adds and settled reject with its error, nothing more is sent", async () => {
    const { sent, send } = fakeSends();
    const pipeline = new CommitPipeline(send, () => {}, 1, true);
    await pipeline.add(write(1));
    await pipeline.add(write(2));
    const stale = new DurableError("stale_fence", "another worker holds the lease");
    sent[0]!.done(stale);
    await expect(pipeline.settled()).rejects.toBe(stale);
    await expect(pipeline.add(write(3))).rejects.toBe(stale);
    expect(sent).toHaveLength(1);
  });
});
