import { PGlite } from "@electric-sql/pglite";
import { Agent, ScriptedProvider, Session } from "@openrath/core";
import { createDurableRuntime, defineWorkflow, RUN_STATUSES } from "@openrath/runtime-durable";
import { pgliteStore } from "@openrath/store-postgres";
import {
  type DataPoint,
  type Histogram,
  MeterProvider,
  MetricReader,
  type ResourceMetrics,
} from "@opentelemetry/sdk-metrics";
import { afterAll, describe, expect, it } from "vitest";
import { openrathTelemetry } from "../telemetry.js";
import { METRIC_ATTRIBUTES as A, METRIC_NAMES as M, openrathMetrics } from "./index.js";

/** A reader collected on demand: each `collect()` is one collection, as a scrape is. */
class OnDemandReader extends MetricReader {
  protected async onShutdown() {}
  protected async onForceFlush() {}
}

const db = PGlite.create();
afterAll(async () => (await db).close());

function points(metrics: ResourceMetrics, name: string): DataPoint<unknown>[] {
  const found = metrics.scopeMetrics.flatMap((s) => s.metrics).find((m) => m.descriptor.name === name);
  return (found?.dataPoints ?? []) as DataPoint<unknown>[];
}

function sum(metrics: ResourceMetrics, name: string, where: Record<string, unknown> = {}): number {
  return points(metrics, name)
    .filter((p) => Object.entries(where).every(([k, v]) => p.attributes[k] === v))
    .reduce((total, p) => total + (typeof p.value === "number" ? p.value : (p.value as Histogram).count), 0);
}

const until = async (check: () => Promise<boolean>, what: string) => {
  for (let i = 0; i < 500; i++) {
    if (await check()) return;
    await new Promise((r) => setTimeout(r, 20));
  }
  throw new Error(`timed out waiting for ${what}`);
};

describe("openrathMetrics on a PGlite store", () => {
  it("reports the store's counts, worker events, step latency, journal hits and live tokens by tenant, workflow and model", async () => {
    const store = await pgliteStore({ db: await db, schema: "metrics_1" });
    const runtime = createDurableRuntime({ store });
    const reader = new OnDemandReader();
    const provider = new MeterProvider({ readers: [reader] });
    const m = openrathMetrics({
      meter: provider.getMeter("test"),
      prices: { "scripted-model": { input: 1, output: 2 } },
    });
    const stop = m.observeStore(store);
    // Reads of the stats are counted: one per collection.
    let reads = 0;
    const read = store.stats!.read.bind(store.stats);
    (store.stats as { read: typeof read }).read = () => {
      reads++;
      return read();
    };

    const agent = new Agent({
      name: "writer",
      provider: new ScriptedProvider(() => ({
        text: "done",
        model: "scripted-model",
        usage: { promptTokens: 100, completionTokens: 10 },
      })),
    });
    let failOnce = true;
    const answer = defineWorkflow("answer").step(
      "write",
      async (session, ctx) => {
        const out = await agent.run(session, ctx);
        // The first attempt fails after its model call was journaled: the retry replays it.
        if (failOnce) {
          failOnce = false;
          throw new Error("fails once");
        }
        return out;
      },
      { entry: true, retry: { maxAttempts: 2, baseMs: 1, maxMs: 5 } },
    );
    const parked = defineWorkflow("unattended").step("only", (s) => s, { entry: true });
    const answerPlan = await runtime.register(answer);
    await runtime.register(parked);

    // A run claimed by an earlier incarnation of the worker's identity, taken back at start.
    const held = await runtime.submit(answerPlan, Session.fromUserMessage("held"), { tenantId: "acme" });
    await store.claim({
      workerId: "metrics-worker",
      planHashes: [answerPlan.hash],
      leaseMs: 60_000,
      limit: 1,
    });

    const worker = runtime.worker({
      plans: [answerPlan],
      workerId: "metrics-worker",
      leaseMs: 3_000,
      observer: m.worker,
      middleware: m.middleware,
      log: () => {},
    });
    await worker.start();
    await runtime.result(held.id, { tenantId: "acme" });
    const done = await runtime.submit(answerPlan, Session.fromUserMessage("hello"), { tenantId: "acme" });
    await runtime.result(done.id, { tenantId: "acme" });
    // Runs of a workflow no worker holds stay queued and due; one is cancelled.
    for (let i = 0; i < 3; i++)
      await runtime.submit("unattended", Session.fromUserMessage(`q${i}`), { tenantId: "globex" });
    const cancelled = await runtime.submit("unattended", Session.fromUserMessage("c"), {
      tenantId: "globex",
    });
    await runtime.cancel(cancelled.id, undefined, { tenantId: "globex" });

    const { resourceMetrics: collected, errors } = await reader.collect();
    expect(errors).toEqual([]);
    expect(reads).toBe(1);

    // The gauges equal the store's counts, read independently through listRuns.
    const listed = [
      ...(await store.listRuns({ tenantId: "acme", limit: 100 })),
      ...(await store.listRuns({ tenantId: "globex", limit: 100 })),
    ];
    for (const workflow of ["answer", "unattended"])
      for (const status of RUN_STATUSES)
        expect(
          sum(collected, M.runs, { [A.workflow]: workflow, [A.status]: status }),
          `${workflow}/${status}`,
        ).toBe(listed.filter((r) => r.workflow === workflow && r.status === status).length);
    expect(sum(collected, M.runs, { [A.workflow]: "answer", [A.status]: "succeeded" })).toBe(2);
    expect(sum(collected, M.queueDepth, { [A.workflow]: "unattended" })).toBe(3);
    expect(sum(collected, M.queueDepth, { [A.workflow]: "answer" })).toBe(0);
    expect(sum(collected, M.queueOldestAge, { [A.workflow]: "unattended" })).toBeGreaterThanOrEqual(0);
    expect(points(collected, M.queueOldestAge)).toHaveLength(2);
    expect(sum(collected, M.effectsUnderReview)).toBe(0);
    expect(sum(collected, M.interruptsOpen)).toBe(0);

    // Worker events: the held run taken back; the second run claimed (by a claim or at submit).
    expect(sum(collected, M.runsReclaimed)).toBe(1);
    // Every claim the store recorded, less the test's own claim of the held run.
    let claimedEvents = 0;
    for (const id of [held.id, done.id])
      claimedEvents += (await store.readEvents(id)).filter((e) => e.type === "run.claimed").length;
    expect(sum(collected, M.runsClaimed)).toBe(claimedEvents - 1);
    expect(sum(collected, M.runsClaimed)).toBeGreaterThanOrEqual(1);
    expect(sum(collected, M.claimDuration)).toBeGreaterThanOrEqual(1);

    // The held run's attempt 1 fails after its model call; attempt 2 replays it from the journal.
    expect(
      sum(collected, M.stepDuration, { [A.workflow]: "answer", [A.step]: "write", [A.outcome]: "error" }),
    ).toBe(1);
    expect(
      sum(collected, M.stepDuration, { [A.workflow]: "answer", [A.step]: "write", [A.outcome]: "ok" }),
    ).toBe(2);
    expect(sum(collected, M.journalHits, { [A.workflow]: "answer", [A.kind]: "model" })).toBe(1);
    // Tokens counted for live calls only: two live model calls (one per run) of 100 in and 10 out.
    const tokens = { [A.tenant]: "acme", [A.workflow]: "answer", [A.model]: "scripted-model" };
    expect(sum(collected, M.tokens, { ...tokens, [A.tokenType]: "input" })).toBe(200);
    expect(sum(collected, M.tokens, { ...tokens, [A.tokenType]: "output" })).toBe(20);
    expect(sum(collected, M.cost, tokens)).toBeCloseTo((200 * 1 + 20 * 2) / 1e6, 12);

    // No attribute holds a run id.
    const ids = new Set(listed.map((r) => r.id));
    for (const s of collected.scopeMetrics)
      for (const metric of s.metrics)
        for (const p of metric.dataPoints as DataPoint<unknown>[])
          for (const value of Object.values(p.attributes)) expect(ids.has(String(value))).toBe(false);

    await reader.collect();
    expect(reads).toBe(2);
    stop();
    await reader.collect();
    expect(reads).toBe(2);

    await worker.stop();
    await runtime.close();
    await provider.shutdown();
    await store.close();
  });

  it("counts runs whose expired lease a sweep requeued", async () => {
    const store = await pgliteStore({ db: await db, schema: "metrics_2" });
    const runtime = createDurableRuntime({ store });
    const reader = new OnDemandReader();
    const provider = new MeterProvider({ readers: [reader] });
    const m = openrathMetrics({ meter: provider.getMeter("test") });
    const flow = defineWorkflow("slow").step("wait", (s) => s, { entry: true });
    const plan = await runtime.register(flow);
    const run = await runtime.submit(plan, Session.fromUserMessage("x"));
    // A worker that died holding the run: its short lease expires in the database.
    await store.claim({ workerId: "dead", planHashes: [plan.hash], leaseMs: 50, limit: 1 });
    const worker = runtime.worker({ plans: [plan], leaseMs: 300, observer: m.worker, log: () => {} });
    await worker.start();
    await runtime.result(run.id);
    await until(async () => {
      const { resourceMetrics } = await reader.collect();
      return sum(resourceMetrics, M.leasesExpired) === 1;
    }, "the expired lease to be counted");
    const { resourceMetrics } = await reader.collect();
    expect(sum(resourceMetrics, M.runsClaimed)).toBe(1);
    await worker.stop();
    await runtime.close();
    await provider.shutdown();
    await store.close();
  });

  it("through openrathTelemetry (runtime and worker options) the journal hits and live tokens are told apart", async () => {
    const store = await pgliteStore({ db: await db, schema: "metrics_3" });
    const reader = new OnDemandReader();
    const provider = new MeterProvider({ readers: [reader] });
    const telemetry = openrathTelemetry({ meter: provider.getMeter("test") });
    const runtime = createDurableRuntime({ store, ...telemetry.runtime });
    const agent = new Agent({
      name: "writer",
      provider: new ScriptedProvider(() => ({
        text: "ok",
        model: "m1",
        usage: { promptTokens: 7, completionTokens: 3 },
      })),
    });
    let failOnce = true;
    const flow = defineWorkflow("composed").step(
      "write",
      async (session, ctx) => {
        const out = await agent.run(session, ctx);
        if (failOnce) {
          failOnce = false;
          throw new Error("fails once");
        }
        return out;
      },
      { entry: true, retry: { maxAttempts: 2, baseMs: 1, maxMs: 5 } },
    );
    await runtime.register(flow);
    const worker = runtime.worker({ ...telemetry.worker, log: () => {} });
    await worker.start();
    const run = await runtime.submit("composed", Session.fromUserMessage("go"));
    await runtime.result(run.id);
    const { resourceMetrics } = await reader.collect();
    expect(sum(resourceMetrics, M.journalHits, { [A.workflow]: "composed", [A.kind]: "model" })).toBe(1);
    expect(sum(resourceMetrics, M.tokens, { [A.workflow]: "composed", [A.tokenType]: "input" })).toBe(7);
    expect(sum(resourceMetrics, M.stepDuration, { [A.workflow]: "composed" })).toBe(2);
    await worker.stop();
    await runtime.close();
    await provider.shutdown();
    await store.close();
  });
});
