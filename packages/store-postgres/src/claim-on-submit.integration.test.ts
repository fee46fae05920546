import { randomBytes } from "node:crypto";
import { Session } from "@openrath/core";
import { createDurableRuntime, defineWorkflow } from "@openrath/runtime-durable";
import { afterEach, describe, expect, it } from "vitest";
import { pgliteStore, postgresStore, type QueryEvent } from "./postgres-store.js";
import { POSTGRES_URL, postgres } from "./testing/postgres-url.js";

const open: { close(): Promise<void> }[] = [];
afterEach(async () => {
  for (const s of open.splice(0).reverse()) await s.close();
});

const isClaim = (e: QueryEvent) => /cand as \(select r\.id/.test(e.sql);

/** A gate a step waits on. */
function gate() {
  let open!: () => void;
  const opened = new Promise<void>((resolve) => (open = resolve));
  return { opened, open: () => open() };
}

/** A runtime on a fresh schema of the test server, with the statements it sends. */
async function serverRuntime(schema = `cos_${randomBytes(4).toString("hex")}`) {
  const sent: QueryEvent[] = [];
  const store = await postgresStore({
    connectionString: POSTGRES_URL,
    schema,
    migrate: true,
    onQuery: (e) => sent.push(e),
  });
  const rt = createDurableRuntime({ store });
  open.push(rt);
  return { rt, sent, schema };
}

const one = () =>
  defineWorkflow("one").step("only", (s) => s.append({ kind: "assistant", content: "done" }), {
    entry: true,
  });

describe.skipIf(!postgres.available)(`claim on submit, on a PostgreSQL server (${postgres.reason})`, () => {
  it("a run submitted beside a worker with a free slot starts leased to it, without a claim statement", async () => {
    const { rt, sent } = await serverRuntime();
    await rt.register(one());
    const worker = rt.worker({ concurrency: 2, leaseMs: 30_000 });
    await worker.start();
    await new Promise((resolve) => setTimeout(resolve, 50));
    sent.length = 0;
    for (let i = 0; i < 4; i++) {
      const run = await rt.submit("one", Session.fromUserMessage(`task ${i}`));
      expect(run).toMatchObject({ status: "running", leaseHolder: worker.workerId, version: 2, eventSeq: 2 });
      expect((await rt.wait(run.id)).status).toBe("succeeded");
    }
    expect(sent.filter(isClaim)).toEqual([]);
    const [last] = await rt.store.listRuns({ tenantId: "default", limit: 1 });
    expect((await rt.store.readEvents(last!.id)).map((e) => e.type)).toEqual([
      "run.created",
      "run.claimed",
      "run.state.changed",
    ]);
  });

  it("runs beyond the worker's free slots are queued, claimed as slots free up, and every run ends once", async () => {
    const { rt, sent } = await serverRuntime();
    const held = gate();
    await rt.register(
      defineWorkflow("held").step(
        "only",
        async (s) => {
          await held.opened;
          return s.append({ kind: "assistant", content: "done" });
        },
        { entry: true },
      ),
    );
    const worker = rt.worker({ concurrency: 3, leaseMs: 30_000 });
    await worker.start();
    const runs = await Promise.all(
      Array.from({ length: 8 }, (_, i) => rt.submit("held", Session.fromUserMessage(`burst ${i}`))),
    );
    expect(runs.filter((r) => r.status === "running")).toHaveLength(3);
    expect(runs.filter((r) => r.status === "queued")).toHaveLength(5);
    expect(worker.activeRuns.sort()).toEqual(
      runs
        .filter((r) => r.status === "running")
        .map((r) => r.id)
        .sort(),
    );
    held.open();
    const ended = await Promise.all(runs.map((r) => rt.wait(r.id, { signal: AbortSignal.timeout(10_000) })));
    expect(ended.map((r) => r.status)).toEqual(Array(8).fill("succeeded"));
    expect(sent.filter(isClaim).length).toBeGreaterThan(0);
    for (const run of ended) {
      const types = (await rt.store.readEvents(run.id)).map((e) => e.type);
      expect(types.filter((t) => t === "run.claimed")).toHaveLength(1);
      expect(types.at(-1)).toBe("run.state.changed");
    }
  });

  it("a run not yet due, or one a submitter without workers sends, is queued and claimed as before", async () => {
    const { rt, schema } = await serverRuntime();
    await rt.register(one());
    await rt.worker({ concurrency: 4, leaseMs: 30_000 }).start();
    const later = await rt.submit("one", Session.fromUserMessage("later"), { notBefore: Date.now() + 300 });
    expect(later.status).toBe("queued");
    const store = await postgresStore({ connectionString: POSTGRES_URL, schema });
    const api = createDurableRuntime({ store });
    open.push(api);
    await api.register(one());
    const elsewhere = await api.submit("one", Session.fromUserMessage("from the API"));
    expect(elsewhere.status).toBe("queued");
    expect((await rt.wait(elsewhere.id, { signal: AbortSignal.timeout(5_000) })).status).toBe("succeeded");
    expect((await rt.wait(later.id, { signal: AbortSignal.timeout(5_000) })).status).toBe("succeeded");
  });

  it("stopping a worker while submissions claim runs for it: the claimed runs are drained, or given back with drain: false", async () => {
    const { rt } = await serverRuntime();
    await rt.register(one());
    const worker = rt.worker({ concurrency: 8, leaseMs: 30_000 });
    await worker.start();
    const submitting = Array.from({ length: 6 }, (_, i) =>
      rt.submit("one", Session.fromUserMessage(`s${i}`)),
    );
    const stopping = worker.stop();
    const runs = await Promise.all(submitting);
    await stopping;
    expect(worker.activeRuns).toEqual([]);
    // Each run either ran to its end on this worker or is queued for another one: none is left leased.
    const statuses = await Promise.all(runs.map(async (r) => (await rt.get(r.id))!.status));
    for (const status of statuses) expect(["succeeded", "queued"]).toContain(status);
    const next = rt.worker({ concurrency: 8, leaseMs: 30_000 });
    await next.start();
    const ended = await Promise.all(runs.map((r) => rt.wait(r.id, { signal: AbortSignal.timeout(5_000) })));
    expect(ended.map((r) => r.status)).toEqual(Array(6).fill("succeeded"));

    const held = gate();
    await rt.register(
      defineWorkflow("long").step(
        "only",
        async (s, ctx) => {
          await Promise.race([
            held.opened,
            new Promise((resolve) => ctx.signal.addEventListener("abort", resolve)),
          ]);
          return s.append({ kind: "assistant", content: "done" });
        },
        { entry: true },
      ),
    );
    const third = rt.worker({
      concurrency: 2,
      leaseMs: 30_000,
      plans: rt.plans.filter((p) => p.name === "long"),
    });
    await third.start();
    const long = await rt.submit("long", Session.fromUserMessage("long"));
    expect(long).toMatchObject({ status: "running", leaseHolder: third.workerId });
    await third.stop({ drain: false });
    expect((await rt.get(long.id))!.status).toBe("queued");
    held.open();
  });
});

describe("claim on submit, embedded", () => {
  it("an embedded store's runtime does not claim on submit (a busy worker's one claim and shared ends serve it better)", async () => {
    const store = await pgliteStore({ schema: "cos_embedded" });
    const rt = createDurableRuntime({ store });
    open.push(rt);
    await rt.register(one());
    await rt.worker({ concurrency: 4 }).start();
    const run = await rt.submit("one", Session.fromUserMessage("embedded"));
    expect(run.status).toBe("queued");
    expect((await rt.wait(run.id)).status).toBe("succeeded");
  });
});
