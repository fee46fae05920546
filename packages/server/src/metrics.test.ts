import { PGlite } from "@electric-sql/pglite";
import { Agent, ScriptedProvider, Session } from "@openrath/core";
import { createDurableRuntime, defineWorkflow, RUN_STATUSES } from "@openrath/runtime-durable";
import { pgliteStore } from "@openrath/store-postgres";
import { afterAll, describe, expect, it } from "vitest";
import { prometheusRegistry } from "./routes/metrics.js";
import { createServer } from "./server.js";
import { approval, bearer, echo, mint } from "./testing/harness.js";

const db = PGlite.create();
afterAll(async () => (await db).close());

/** The samples of a Prometheus text body: `name{labels} value` lines, comments dropped. */
function samples(text: string): { name: string; labels: Record<string, string>; value: number }[] {
  const out = [];
  for (const line of text.split("\n")) {
    if (line === "" || line.startsWith("#")) continue;
    const match = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? (\S+)/.exec(line);
    if (!match) throw new Error(`not a Prometheus sample line: ${line}`);
    const labels: Record<string, string> = {};
    for (const pair of (match[2] ?? "").matchAll(/([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"/g))
      labels[pair[1]!] = pair[2]!;
    out.push({ name: match[1]!, labels, value: Number(match[3]) });
  }
  return out;
}

const total = (list: ReturnType<typeof samples>, name: string, where: Record<string, string> = {}) =>
  list
    .filter((s) => s.name === name && Object.entries(where).every(([k, v]) => s.labels[k] === v))
    .reduce((sum, s) => sum + s.value, 0);

describe("GET /metrics", () => {
  it("serves every metric in the Prometheus text format, consistent with the store's counts, to a token with metrics.read", async () => {
    const pg = await db;
    const store = await pgliteStore({ db: pg, schema: "metrics_route" });
    const runtime = createDurableRuntime({ store });
    const registry = prometheusRegistry({ prices: { "scripted-model": { input: 3, output: 15 } } });
    const metrics = registry.openrath;
    const agent = new Agent({
      name: "writer",
      provider: new ScriptedProvider(() => ({
        text: "done",
        model: "scripted-model",
        usage: { promptTokens: 40, completionTokens: 4 },
      })),
    });
    let failOnce = true;
    const write = defineWorkflow("write").step(
      "draft",
      async (session, ctx) => {
        const out = await agent.run(session, ctx);
        if (failOnce) {
          failOnce = false;
          throw new Error("fails once, after the journaled model call");
        }
        return out;
      },
      { entry: true, retry: { maxAttempts: 2, baseMs: 1, maxMs: 5 } },
    );
    let holdOnce = true;
    const hold = defineWorkflow("hold").step(
      "wait",
      async (session, ctx) => {
        if (holdOnce) {
          holdOnce = false;
          // Held until the lease is taken away below.
          await new Promise((resolve) => ctx.signal.addEventListener("abort", resolve, { once: true }));
          throw ctx.signal.reason;
        }
        return session.append({ kind: "assistant", content: "held, then done" });
      },
      { entry: true },
    );
    const plans = [];
    for (const flow of [echo, approval, write, hold]) plans.push(await runtime.register(flow));
    await runtime.register(defineWorkflow("unattended").step("only", (s) => s, { entry: true }));
    // A run the worker's identity held before a restart: taken back at start.
    const held = await runtime.submit("echo", Session.fromUserMessage("from before"));
    await store.claim({ workerId: "metrics-route", planHashes: [plans[0]!.hash], leaseMs: 60_000, limit: 1 });
    const worker = runtime.worker({
      plans,
      workerId: "metrics-route",
      leaseMs: 600,
      middleware: metrics.middleware,
      observer: metrics.worker,
      log: () => {},
    });
    await worker.start();
    const app = await createServer({ runtime, auth: { mode: "tokens" }, metrics: { registry } });
    try {
      const token = await mint(store.access!, { grants: ["run.*", "metrics.read"] });
      const other = await mint(store.access!, { grants: ["run.*"] });
      const post = async (assistant: string, input: string) => {
        const response = await app.inject({
          method: "POST",
          url: "/v1/runs",
          headers: bearer(token),
          payload: { assistant, input },
        });
        expect(response.statusCode, response.body).toBe(201);
        return response.json().id as string;
      };
      const ended = [held.id];
      for (let i = 0; i < 3; i++) ended.push(await post("echo", `hi ${i}`));
      ended.push(await post("write", "draft it"));
      await post("approval", "ship?");
      for (let i = 0; i < 2; i++) await post("unattended", `later ${i}`);
      // The hold run's lease is taken away under the worker (as another claim would): the worker
      // learns it lost the lease at its next heartbeat, and a sweep requeues the run.
      const holding = await post("hold", "hold");
      for (let i = 0; (await runtime.get(holding))?.status !== "running"; i++) {
        if (i > 500) throw new Error("the hold run never started");
        await new Promise((r) => setTimeout(r, 10));
      }
      await pg.query(
        "update metrics_route.runs set fencing_token = fencing_token + 1, lease_holder = 'elsewhere', lease_expires_at = now() where id = $1",
        [holding],
      );
      ended.push(holding);
      for (const id of ended) await runtime.wait(id);
      for (let i = 0; (await store.stats!.read()).openInterrupts < 1; i++) {
        if (i > 500) throw new Error("the approval run never asked");
        await new Promise((r) => setTimeout(r, 10));
      }

      const denied = await app.inject({ method: "GET", url: "/metrics", headers: bearer(other) });
      expect(denied.statusCode).toBe(403);
      expect((await app.inject({ method: "GET", url: "/metrics" })).statusCode).toBe(401);

      const scrape = await app.inject({ method: "GET", url: "/metrics", headers: bearer(token) });
      expect(scrape.statusCode).toBe(200);
      expect(scrape.headers["content-type"]).toMatch(/^text\/plain; version=0\.0\.4/);
      const list = samples(scrape.body);
      const names = new Set(list.map((s) => s.name));
      for (const name of [
        "openrath_runs",
        "openrath_queue_depth",
        "openrath_queue_oldest_due_age",
        "openrath_effects_under_review",
        "openrath_interrupts_open",
        "openrath_worker_claim_duration_bucket",
        "openrath_worker_runs_claimed_total",
        "openrath_worker_leases_lost_total",
        "openrath_worker_leases_expired_total",
        "openrath_worker_runs_reclaimed_total",
        "openrath_step_duration_bucket",
        "openrath_journal_hits_total",
        "openrath_tokens_total",
        "openrath_cost_total",
      ])
        expect([...names], name).toContain(name);

      // The store's counts, read independently.
      const runs = await store.listRuns({ tenantId: "default", limit: 100 });
      for (const workflow of ["echo", "approval", "write", "hold", "unattended"])
        for (const status of RUN_STATUSES)
          expect(
            total(list, "openrath_runs", { openrath_workflow: workflow, openrath_run_status: status }),
            `${workflow}/${status}`,
          ).toBe(runs.filter((r) => r.workflow === workflow && r.status === status).length);
      expect(total(list, "openrath_runs", { openrath_run_status: "succeeded" })).toBe(ended.length);
      expect(total(list, "openrath_queue_depth", { openrath_workflow: "unattended" })).toBe(2);
      expect(total(list, "openrath_interrupts_open")).toBe(1);
      expect(total(list, "openrath_effects_under_review")).toBe(0);
      expect(total(list, "openrath_worker_runs_reclaimed_total")).toBe(1);
      expect(total(list, "openrath_worker_leases_lost_total", { openrath_workflow: "hold" })).toBe(1);
      expect(total(list, "openrath_worker_leases_expired_total")).toBeGreaterThanOrEqual(1);
      expect(
        total(list, "openrath_journal_hits_total", {
          openrath_workflow: "write",
          openrath_journal_kind: "model",
        }),
      ).toBe(1);
      const tokens = {
        openrath_tenant: "default",
        openrath_workflow: "write",
        gen_ai_request_model: "scripted-model",
      };
      expect(total(list, "openrath_tokens_total", { ...tokens, gen_ai_token_type: "input" })).toBe(40);
      expect(total(list, "openrath_tokens_total", { ...tokens, gen_ai_token_type: "output" })).toBe(4);
      // No label holds a run id.
      const ids = new Set(runs.map((r) => r.id));
      for (const sample of list)
        for (const value of Object.values(sample.labels)) expect(ids.has(value)).toBe(false);
    } finally {
      await app.close();
      await worker.stop({ drain: false });
      await runtime.close();
      await registry.shutdown();
      await store.close();
    }
  });

  it("access open serves without credentials; metrics false removes the route", async () => {
    const store = await pgliteStore({ db: await db, schema: "metrics_open" });
    const runtime = createDurableRuntime({ store });
    const open = await createServer({ runtime, auth: { mode: "tokens" }, metrics: { access: "open" } });
    const none = await createServer({ runtime, auth: { mode: "tokens" }, metrics: false });
    try {
      const scrape = await open.inject({ method: "GET", url: "/metrics" });
      expect(scrape.statusCode).toBe(200);
      expect(samples(scrape.body).some((s) => s.name === "openrath_effects_under_review")).toBe(true);
      expect((await none.inject({ method: "GET", url: "/metrics" })).statusCode).toBe(404);
    } finally {
      await open.close();
      await none.close();
      await runtime.close();
      await store.close();
    }
  });
});
