import { PGlite } from "@electric-sql/pglite";
import { Session } from "@openrath/core";
import { createDurableRuntime, defineWorkflow } from "@openrath/runtime-durable";
import { afterAll, afterEach, describe, expect, it } from "vitest";
import { pgliteStore, type QueryEvent } from "./postgres-store.js";

const db = PGlite.create();
afterAll(async () => (await db).close());
let n = 0;
const closing: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const close of closing.splice(0)) await close();
});

/**
 * A worker of `concurrency` in one runtime, and `runtime`: the same one (its submissions claim runs
 * for its worker when a slot is free), or with `submitter`, another runtime over the same store
 * without workers (its runs are queued, and the worker claims them).
 */
async function setup(concurrency: number, { submitter = false } = {}) {
  const claims: QueryEvent[] = [];
  const submissions: QueryEvent[] = [];
  const store = await pgliteStore({
    db: await db,
    schema: `claims_${++n}`,
    onQuery: (event) => {
      if (/with cand as \(select r\.id/.test(event.sql)) claims.push(event);
      if (/insert into \S+\."runs"/.test(event.sql)) submissions.push(event);
    },
  });
  const flow = defineWorkflow("one").step("s", (s) => s.append({ kind: "assistant", content: "done" }), {
    entry: true,
  });
  const working = createDurableRuntime({ store });
  closing.push(() => working.close());
  await working.register(flow);
  const worker = working.worker({ concurrency, leaseMs: 30_000 });
  await worker.start();
  const runtime = submitter ? createDurableRuntime({ store }) : working;
  if (submitter) await runtime.register(flow);
  // Let the start's first claim (an empty queue) come back.
  await new Promise((resolve) => setTimeout(resolve, 20));
  claims.length = 0;
  return { runtime, claims, submissions, worker };
}

describe("the claim loop", () => {
  it("claims once per submitted run when the queue drains, not again when the run ends", async () => {
    const { runtime, claims } = await setup(1, { submitter: true });
    for (let i = 0; i < 5; i++) {
      const run = await runtime.submit("one", Session.fromUserMessage(`run ${i}`));
      expect((await runtime.wait(run.id)).status).toBe("succeeded");
      await new Promise((resolve) => setImmediate(resolve));
    }
    expect(claims).toHaveLength(5);
  });

  it("claims again when a full claim left runs queued", async () => {
    const { runtime, claims } = await setup(1, { submitter: true });
    const ids = [];
    for (let i = 0; i < 4; i++) ids.push((await runtime.submit("one", Session.fromUserMessage(`r${i}`))).id);
    const ended = await Promise.all(ids.map((id) => runtime.wait(id)));
    expect(ended.map((r) => r.status)).toEqual(["succeeded", "succeeded", "succeeded", "succeeded"]);
    expect(claims.length).toBeGreaterThanOrEqual(4);
  });

  it("a run submitted beside a worker with a free slot starts without a claim", async () => {
    const { runtime, claims, worker } = await setup(1);
    for (let i = 0; i < 5; i++) {
      const run = await runtime.submit("one", Session.fromUserMessage(`run ${i}`));
      expect(run).toMatchObject({ status: "running", leaseHolder: worker.workerId, eventSeq: 2 });
      expect((await runtime.wait(run.id)).status).toBe("succeeded");
      await new Promise((resolve) => setImmediate(resolve));
    }
    expect(claims).toHaveLength(0);
    const events = await runtime.store.readEvents((await runtime.store.listRuns({ tenantId: "default" }))[0]!.id);
    expect(events.map((e) => e.type).slice(0, 2)).toEqual(["run.created", "run.claimed"]);
  });

  it("runs submitted beyond the free slots are queued and claimed as slots free up", async () => {
    const { runtime, claims, submissions } = await setup(2);
    const runs = await Promise.all(
      Array.from({ length: 5 }, (_, i) => runtime.submit("one", Session.fromUserMessage(`burst ${i}`))),
    );
    expect(runs.filter((r) => r.status === "running")).toHaveLength(2);
    expect(runs.filter((r) => r.status === "queued")).toHaveLength(3);
    const ended = await Promise.all(runs.map((r) => runtime.wait(r.id)));
    expect(ended.map((r) => r.status)).toEqual(Array(5).fill("succeeded"));
    expect(claims.length).toBeGreaterThanOrEqual(1);
    expect(submissions.length).toBeGreaterThanOrEqual(1);
  });

  it("a run is queued when its plan's worker has no free slot, or when it is not yet due", async () => {
    const { runtime, worker } = await setup(1);
    let open!: () => void;
    const gate = { promise: new Promise<void>((resolve) => (open = resolve)), resolve: () => open() };
    const slow = await runtime.register(
      defineWorkflow("slow").step(
        "s",
        async (s) => {
          await gate.promise;
          return s.append({ kind: "assistant", content: "slow" });
        },
        { entry: true },
      ),
    );
    const slowWorker = runtime.worker({ concurrency: 1, leaseMs: 30_000, plans: [slow] });
    await slowWorker.start();
    const first = await runtime.submit("slow", Session.fromUserMessage("holds the slot"));
    expect(first.status).toBe("running");
    // The slow plan's worker is busy: the next run of that plan is queued...
    const queued = await runtime.submit("slow", Session.fromUserMessage("waits"));
    expect(queued.status).toBe("queued");
    // ...and a run scheduled for later is queued even where a slot is free.
    const later = await runtime.submit("one", Session.fromUserMessage("later"), { notBefore: Date.now() + 200 });
    expect(later.status).toBe("queued");
    gate.resolve();
    expect((await runtime.wait(queued.id)).status).toBe("succeeded");
    expect((await runtime.wait(later.id)).status).toBe("succeeded");
    expect(worker.activeRuns).toEqual([]);
  });

  it("a tenant's cap holding a run back keeps the claim loop claiming as that tenant's runs end", async () => {
    const { runtime } = await setup(2);
    await runtime.store.setTenantLimit("default", 1);
    const ids = [];
    for (let i = 0; i < 3; i++) ids.push((await runtime.submit("one", Session.fromUserMessage(`c${i}`))).id);
    const started = Date.now();
    await Promise.all(ids.map((id) => runtime.wait(id)));
    // Without a claim on each end, the held-back runs would wait for the heartbeat (10 s here).
    expect(Date.now() - started).toBeLessThan(5_000);
  });
});
