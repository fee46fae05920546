import { PGlite } from "@electric-sql/pglite";
import { Agent, defineTool, ScriptedProvider, Session } from "@openrath/core";
import {
  createDurableRuntime,
  type DurableRuntime,
  type DurableWorker,
  defineWorkflow,
} from "@openrath/runtime-durable";
import { DurableError, type RunStoreV1 } from "@openrath/runtime-durable/store";
import { afterAll, afterEach, describe, expect, it } from "vitest";
import { pgliteStore, postgresStore } from "./postgres-store.js";
import { POSTGRES_URL, postgres } from "./testing/postgres-url.js";

const embedded = PGlite.create();
afterAll(async () => (await embedded).close());
const cleanup: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const fn of cleanup.splice(0).reverse()) await fn().catch(() => {});
});

let n = 0;
const stores: Record<string, () => Promise<RunStoreV1>> = {
  PGlite: async () => pgliteStore({ db: await embedded, schema: `guards_${++n}` }),
  ...(postgres.available
    ? {
        PostgreSQL: () =>
          postgresStore({
            connectionString: POSTGRES_URL!,
            schema: `guards_${process.pid}_${++n}`,
            migrate: true,
          }),
      }
    : {}),
};

/** A workflow whose step waits for a human: its run stays active (parked) for the test to poke at. */
const asking = defineWorkflow("asking").step(
  "ask",
  async (session, ctx) => {
    const decision = await ctx.interrupt({ kind: "approval", request: { question: "ship it?" } });
    return session.append({ kind: "assistant", content: `decided: ${decision.kind}`, author: "asker" });
  },
  { entry: true },
);

/** One agent turn calling a tool with no declared effect (so `non_idempotent`) that never returns until aborted. */
function hanging(onCall: () => void) {
  const tool = defineTool({
    name: "charge",
    description: "Charges a card",
    parameters: { type: "object", properties: {}, additionalProperties: false },
    execute: (_args, context) =>
      new Promise((_resolve, reject) => {
        onCall();
        context.signal?.addEventListener("abort", () => reject(context.signal?.reason));
      }),
  });
  const provider = new ScriptedProvider([
    { toolCalls: [{ id: "c1", name: "charge", arguments: "{}" }] },
    { text: "charged" },
  ]);
  return defineWorkflow("charging").step(
    "charge",
    (session, ctx) => new Agent({ name: "biller", provider, tools: [tool] }).run(session, ctx),
    { entry: true },
  );
}

describe.each(Object.keys(stores))("runtime guards on %s", (name) => {
  async function open(tenantId = "a"): Promise<{ store: RunStoreV1; runtime: DurableRuntime }> {
    const store = await stores[name]!();
    cleanup.push(() => store.close());
    return { store, runtime: createDurableRuntime({ store, tenantId }) };
  }
  async function started(runtime: DurableRuntime, options: Parameters<DurableRuntime["worker"]>[0] = {}) {
    const worker: DurableWorker = runtime.worker({ leaseMs: 2_000, ...options });
    await worker.start();
    cleanup.push(() => worker.stop({ drain: false }));
    return worker;
  }

  it("every runtime method is scoped to its tenant: tenant b cannot see or touch tenant a's run", async () => {
    const { store, runtime: a } = await open("a");
    const b = createDurableRuntime({ store, tenantId: "b" });
    await a.register(asking);
    await started(a);
    const run = await a.submit("asking", Session.fromUserMessage("hello"));
    const parked = await a.wait(run.id, { onPark: "return" });
    expect(parked.status).toBe("waiting");
    const notFound = { code: "run_not_found" };

    expect(await b.get(run.id)).toBeUndefined();
    expect(await b.listRuns()).toEqual([]);
    await expect(b.session(run.id)).rejects.toMatchObject(notFound);
    await expect(b.cancel(run.id, "not yours")).rejects.toMatchObject(notFound);
    await expect(b.wait(run.id)).rejects.toMatchObject(notFound);
    await expect(b.result(run.id)).rejects.toMatchObject(notFound);
    await expect(b.stream(run.id).next()).rejects.toMatchObject(notFound);
    await expect(b.follow(run.id).next()).rejects.toMatchObject(notFound);
    expect((await b.interrupts.list()).items).toEqual([]);
    const [interrupt] = (await a.interrupts.list()).items;
    expect(interrupt).toBeDefined();
    expect(await b.interrupts.get(interrupt!.id)).toBeUndefined();
    await expect(
      b.interrupts.decide(interrupt!.id, { kind: "approve", actor: "mallory" }),
    ).rejects.toMatchObject({
      code: "interrupt_not_found",
    });
    expect((await b.effects.list({ status: ["needs_review", "dispatched", "succeeded"] })).items).toEqual([]);

    // Nothing of a's run changed, and a still sees and finishes it.
    expect(await a.get(run.id)).toMatchObject({ status: "waiting", version: parked.version });
    expect((await a.listRuns()).map((r) => r.id)).toEqual([run.id]);
    await a.interrupts.decide(interrupt!.id, { kind: "approve", actor: "ana" });
    expect((await a.result(run.id, { onPark: "wait" })).text()).toBe("decided: approve");
    // An operator runtime may name the tenant it acts in.
    expect(await b.get(run.id, { tenantId: "a" })).toMatchObject({ status: "succeeded" });
  });

  it("wait and result settle on a park with run_parked naming the interrupt; onPark says otherwise", async () => {
    const lines: { level: string; message: string; data?: Record<string, unknown> }[] = [];
    const { runtime } = await open();
    await runtime.register(asking);
    await started(runtime, {
      log: (level, message, data) => lines.push({ level, message, ...(data ? { data } : {}) }),
    });
    const run = await runtime.submit("asking", Session.fromUserMessage("hello"));
    const error = await runtime.result(run.id).catch((e: unknown) => e);
    expect(DurableError.isInstance(error, "run_parked")).toBe(true);
    const [interrupt] = (await runtime.interrupts.list()).items;
    expect((error as DurableError).details).toMatchObject({
      runId: run.id,
      status: "waiting",
      interrupts: [{ id: interrupt!.id, kind: "approval", stepId: "ask" }],
      effects: [],
    });
    expect((error as Error).message).toContain(interrupt!.id);
    await expect(runtime.wait(run.id)).rejects.toMatchObject({ code: "run_parked" });
    expect(await runtime.wait(run.id, { onPark: "return" })).toMatchObject({ status: "waiting" });
    expect(lines.some((l) => l.message === "run parked" && l.data?.runId === run.id)).toBe(true);
    // Waiting through the park: the decision ends the wait with the result.
    const through = runtime.result(run.id, { onPark: "wait" });
    await runtime.interrupts.decide(interrupt!.id, { kind: "reject", actor: "ana" });
    expect((await through).text()).toBe("decided: reject");
  });

  it("a crash in a tool with no declared effect parks the run needs_review, and result() says which effect", async () => {
    const { store, runtime } = await open();
    let calls = 0;
    let called!: () => void;
    const inCall = new Promise<void>((resolve) => {
      called = resolve;
    });
    const flow = hanging(() => {
      calls++;
      called();
    });
    await runtime.register(flow);
    const first = await started(runtime, { workerId: "w1", leaseMs: 300 });
    const run = await runtime.submit("charging", Session.fromUserMessage("charge me"));
    await inCall;
    // The worker goes away mid-call without a word (its lease expires), as a crashed process would.
    await first.stop({ drain: false }).catch(() => {});
    await store.journal!.listEffects({ tenantId: "a", runId: run.id, status: "dispatched" });
    const second = createDurableRuntime({ store, tenantId: "a" });
    await second.register(flow);
    await started(second, { workerId: "w2", leaseMs: 300 });
    const error = await second
      .result(run.id, { signal: AbortSignal.timeout(20_000) })
      .catch((e: unknown) => e);
    expect(DurableError.isInstance(error, "run_parked")).toBe(true);
    const [effect] = (await second.effects.list({ runId: run.id })).items;
    expect(effect).toMatchObject({ tool: "charge", effect: "non_idempotent", status: "needs_review" });
    expect((error as DurableError).details).toMatchObject({
      status: "needs_review",
      effects: [{ id: effect!.id, tool: "charge", stepId: "charge" }],
      interrupts: [],
    });
    expect((error as Error).message).toContain("runtime.effects.resolve");
    expect(calls).toBe(1);
  });

  it("submit validates every option before anything is written", async () => {
    const { runtime } = await open();
    const plan = await runtime.register(asking);
    const s = () => Session.fromUserMessage("x");
    const cyclic: Record<string, unknown> = {};
    cyclic.self = cyclic;
    const cases: [string, Parameters<DurableRuntime["submit"]>[2]][] = [
      ["deadline", { deadline: Number.NaN }],
      ["deadline", { deadline: new Date("not a date") }],
      ["deadline", { deadline: -1 }],
      ["deadline", { deadline: Date.now() - 3_600_000 }],
      ["deadline", { deadline: Number.POSITIVE_INFINITY }],
      ["deadline", { deadline: "tomorrow" as never }],
      ["notBefore", { notBefore: Number.NaN }],
      ["notBefore", { notBefore: new Date(Number.NaN) }],
      ["notBefore", { notBefore: Date.now() - 3_600_000 }],
      ["deadline", { notBefore: Date.now() + 60_000, deadline: Date.now() + 30_000 }],
      ["metadata", { metadata: { big: 1n } as never }],
      ["metadata", { metadata: cyclic as never }],
      ["metadata", { metadata: { blob: "x".repeat(10 * 1024 * 1024) } }],
      ["metadata", { metadata: [1, 2] as never }],
      ["metadata", { metadata: { when: new Date() } as never }],
      ["metadata", { metadata: { f: (() => 1) as never } }],
      ["metadata", { metadata: { n: Number.NaN } }],
      ["tenantId", { tenantId: "a\u0000b" }],
      ["tenantId", { tenantId: "t".repeat(1024 * 1024) }],
      ["tenantId", { tenantId: "" }],
      ["idempotencyKey", { idempotencyKey: "k\u0000" }],
      ["idempotencyKey", { idempotencyKey: "k".repeat(1024 * 1024) }],
      ["idempotencyKey", { idempotencyKey: 42 as never }],
      ["priority", { priority: 1.5 }],
    ];
    for (const [option, options] of cases) {
      const error = await runtime.submit(plan, s(), options).catch((e: unknown) => e);
      expect(DurableError.isInstance(error, "invalid_argument"), `${option}: ${String(error)}`).toBe(true);
      expect((error as DurableError).details).toMatchObject({ option });
      expect((error as Error).message.length).toBeLessThan(600);
    }
    expect(await runtime.listRuns({ status: ["queued", "running", "waiting"] })).toEqual([]);
    // Within the allowed skew, and in the future, both are fine.
    const ok = await runtime.submit(plan, s(), {
      deadline: new Date(Date.now() + 60_000),
      notBefore: Date.now() - 1_000,
      metadata: { ticket: 42, tags: ["a"], nested: { fine: true, absent: undefined } as never },
    });
    expect(ok.metadata).toEqual({ ticket: 42, tags: ["a"], nested: { fine: true } });
  });

  it("identifiers with NUL bytes or of a megabyte are invalid_argument at every runtime method, never a database error", async () => {
    const { runtime } = await open();
    const nul = "a\u0000b";
    const huge = "r".repeat(1024 * 1024);
    for (const id of [nul, huge]) {
      await expect(runtime.get(id)).rejects.toMatchObject({ code: "invalid_argument" });
      await expect(runtime.cancel(id)).rejects.toMatchObject({ code: "invalid_argument" });
      await expect(runtime.wait(id)).rejects.toMatchObject({ code: "invalid_argument" });
      await expect(runtime.session(id)).rejects.toMatchObject({ code: "invalid_argument" });
      await expect(runtime.stream(id).next()).rejects.toMatchObject({ code: "invalid_argument" });
      await expect(runtime.get("x", { tenantId: id })).rejects.toMatchObject({ code: "invalid_argument" });
      await expect(runtime.listRuns({ tenantId: id })).rejects.toMatchObject({ code: "invalid_argument" });
      await expect(runtime.listRuns({ after: id })).rejects.toMatchObject({ code: "invalid_argument" });
    }
    await expect(runtime.listRuns({ order: "sideways" as "asc" })).rejects.toMatchObject({
      code: "invalid_argument",
    });
    expect(() => createDurableRuntime({ store: runtime.store, tenantId: nul })).toThrow(
      expect.objectContaining({ code: "invalid_argument" }),
    );
    // The store itself, called directly, refuses such values with the same code.
    await expect(runtime.store.listRuns({ tenantId: nul })).rejects.toMatchObject({
      code: "invalid_argument",
    });
    await expect(runtime.store.setTenantLimit(nul, 3)).rejects.toMatchObject({ code: "invalid_argument" });
  });
});
