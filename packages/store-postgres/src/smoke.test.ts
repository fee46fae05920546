import { Session } from "@openrath/core";
import { compilePlan, defineWorkflow, encodeCheckpoint, restoreSession } from "@openrath/runtime-durable";
import { expect, it } from "vitest";
import { pgliteStore } from "./postgres-store.js";

it("smoke", async () => {
  const t0 = performance.now();
  const store = await pgliteStore();
  console.log("open", performance.now() - t0);
  const plan = compilePlan(
    defineWorkflow("w").step("a", (s) => s.append({ kind: "assistant", content: "hi" }), { entry: true }),
  );
  await store.registerPlan(plan.record);
  await store.registerPlan(plan.record);
  const s = Session.fromUserMessage("hello");
  const { write, next } = encodeCheckpoint(s, null, { sequence: 0, stepId: null, nextStep: "a" });
  const { run, created } = await store.submit({
    tenantId: "t",
    planHash: plan.hash,
    checkpoint: write,
    fingerprint: "f",
  });
  expect(created).toBe(true);
  const again = await store
    .submit({
      tenantId: "t",
      planHash: plan.hash,
      checkpoint: write,
      fingerprint: "f",
      idempotencyKey: undefined,
    })
    .catch((e) => e);
  console.log(again.code);
  const claims = await store.claim({ workerId: "w1", planHashes: [plan.hash], leaseMs: 5000, limit: 5 });
  expect(claims.length).toBe(1);
  const cp0 = await store.loadCheckpoint(run.id);
  expect(restoreSession(cp0!).toJSON()).toEqual(s.toJSON());
  const s2 = s.append({ kind: "assistant", content: "there" });
  const enc = encodeCheckpoint(s2, next(run.checkpointId), { sequence: 1, stepId: "a", nextStep: null });
  console.log(JSON.stringify(enc.write.chunkOps));
  const hb = await store.heartbeat([claims[0]!.fence], 5000);
  console.log(hb);
  const done = await store.finish(claims[0]!.fence, { status: "succeeded", checkpoint: enc.write });
  expect(done.status).toBe("succeeded");
  const cp1 = await store.loadCheckpoint(run.id);
  expect(JSON.stringify(restoreSession(cp1!).toJSON())).toBe(JSON.stringify(s2.toJSON()));
  console.log(await store.readEvents(run.id));
  const stale = await store.appendEvent(claims[0]!.fence, { type: "x" }).catch((e) => e);
  console.log(stale.code, stale.message);
  console.log(await store.sweep());
  await store.close();
});
