import { Session } from "@openrath/core";
import { describe, expect, it } from "vitest";
import type { CheckpointBase } from "../checkpoint/delta-codec.js";
import type { Claim, RunRecord } from "../contract/run-records.js";
import { LocalDispatch, type LocalWorker } from "./local-dispatch.js";

function worker(id: string, room: number, plans = ["p"]) {
  const adopted: Claim[] = [];
  let wakes = 0;
  const local: LocalWorker = {
    workerId: id,
    leaseMs: 1000,
    hasRoom: (planHash, reserved) => plans.includes(planHash) && adopted.length + reserved < room,
    adopt: (claim) => adopted.push(claim),
    wake: () => wakes++,
  };
  return { local, adopted, wakes: () => wakes };
}

const run = (fields: Partial<RunRecord>): RunRecord =>
  ({
    id: "r1",
    tenantId: "t",
    sessionId: "s1",
    status: "running",
    leaseHolder: "w1",
    fencingToken: 7,
    leaseExpiresAt: 123,
    checkpointSeq: 0,
    checkpointId: 5,
    ...fields,
  }) as RunRecord;

const base = (id: number): CheckpointBase => ({ id }) as unknown as CheckpointBase;

describe("LocalDispatch", () => {
  it("reserves a slot on the first enrolled worker with room for the plan", () => {
    const dispatch = new LocalDispatch();
    const full = worker("w0", 0);
    const other = worker("w2", 4, ["q"]);
    const free = worker("w1", 1);
    dispatch.enrol(full.local);
    dispatch.enrol(other.local);
    const slots = dispatch.enrol(free.local);
    const reservation = dispatch.reserve("p");
    expect(reservation?.claim).toEqual({ workerId: "w1", leaseMs: 1000 });
    expect(slots.reserved).toBe(1);
    // The one slot is held: no second reservation.
    expect(dispatch.reserve("p")).toBeUndefined();
  });

  it("adopts a run leased to the worker once, handing it the submitted session, and frees the slot", async () => {
    const dispatch = new LocalDispatch();
    const w = worker("w1", 1);
    const slots = dispatch.enrol(w.local);
    const reservation = dispatch.reserve("p")!;
    const idle = slots.idle();
    const session = Session.fromUserMessage("hi");
    expect(reservation.adopt(run({ leaseHolder: "other" }), session, base)).toBe(false);
    expect(reservation.adopt(run({}), session, base)).toBe(true);
    expect(reservation.adopt(run({}), session, base)).toBe(false);
    reservation.release();
    await idle;
    expect(slots.reserved).toBe(0);
    expect(w.wakes()).toBe(0);
    expect(w.adopted).toEqual([
      { run: run({}), fence: { runId: "r1", token: 7, workerId: "w1" }, leaseExpiresAt: 123 },
    ]);
    expect(await dispatch.takeSession(run({}))).toEqual({
      runId: "r1",
      session,
      base: base(5),
      checkpointId: 5,
    });
    expect(await dispatch.takeSession(run({}))).toBeUndefined();
  });

  it("gives an unused slot back and wakes the worker to claim with it", () => {
    const dispatch = new LocalDispatch();
    const w = worker("w1", 1);
    const slots = dispatch.enrol(w.local);
    dispatch.reserve("p")!.release();
    expect(slots.reserved).toBe(0);
    expect(w.wakes()).toBe(1);
    expect(dispatch.reserve("p")).toBeDefined();
  });

  it("wakes the run's waiters when a worker here ends it, and keeps its final record", () => {
    const dispatch = new LocalDispatch();
    let woken = 0;
    const unwatch = dispatch.onEnd("r1", () => woken++);
    const ended = run({ status: "succeeded" });
    dispatch.ended(ended);
    expect(woken).toBe(1);
    expect(dispatch.endedRun("r1")).toBe(ended);
    unwatch();
    dispatch.ended(ended);
    expect(woken).toBe(1);
  });

  it("a claim of a submission still in flight waits for its answer", async () => {
    const dispatch = new LocalDispatch();
    const session = Session.fromUserMessage("hi");
    const settle = dispatch.submitting("t", "s1");
    const taken = dispatch.takeSession(run({}));
    settle({ runId: "r1", session, base: base(5), checkpointId: 5 });
    expect((await taken)?.session).toBe(session);
  });
});
