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

async function setup(concurrency: number) {
  const claims: QueryEvent[] = [];
  const store = await pgliteStore({
    db: await db,
    schema: `claims_${++n}`,
    onQuery: (event) => {
      if (/with cand as \(select r\.id/.test(event.sql)) claims.push(event);
    },
  });
  const runtime = createDurableRuntime({ store });
  closing.push(() => runtime.close());
  await runtime.register(
    defineWorkflow("one").step("s", (s) => s.append({ kind: "assistant", content: "done" }), { entry: true }),
  );
  const worker = runtime.worker({ concurrency, leaseMs: 30_000 });
  await worker.start();
  // Let the start's first claim (an empty queue) come back.
  await new Promise((resolve) => setTimeout(resolve, 20));
  claims.length = 0;
  return { runtime, claims };
}

describe("the claim loop", () => {
  it("claims once per submitted run when the queue drains, not again when the run ends", async () => {
    const { runtime, claims } = await setup(1);
    for (let i = 0; i < 5; i++) {
      const run = await runtime.submit("one", Session.fromUserMessage(`run ${i}`));
      expect((await runtime.wait(run.id)).status).toBe("succeeded");
      await new Promise((resolve) => setImmediate(resolve));
    }
    expect(claims).toHaveLength(5);
  });

  it("claims again when a full claim left runs queued", async () => {
    const { runtime, claims } = await setup(1);
    const ids = [];
    for (let i = 0; i < 4; i++) ids.push((await runtime.submit("one", Session.fromUserMessage(`r${i}`))).id);
    const ended = await Promise.all(ids.map((id) => runtime.wait(id)));
    expect(ended.map((r) => r.status)).toEqual(["succeeded", "succeeded", "succeeded", "succeeded"]);
    expect(claims.length).toBeGreaterThanOrEqual(4);
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
