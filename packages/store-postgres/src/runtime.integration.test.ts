import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { PGlite } from "@electric-sql/pglite";
import { OpenRathError, Session } from "@openrath/core";
import {
  createDurableRuntime,
  type DurableRuntime,
  type DurableWorker,
  DurableWorkflow,
  defineWorkflow,
  router,
  type StepContext,
  step,
} from "@openrath/runtime-durable";
import { sql } from "kysely";
import { afterAll, afterEach, describe, expect, it } from "vitest";
import { pgliteStore } from "./postgres-store.js";

const db = PGlite.create();
afterAll(async () => (await db).close());
let n = 0;
const open: { close(): Promise<void> }[] = [];
const workers: DurableWorker[] = [];
afterEach(async () => {
  for (const w of workers.splice(0)) await w.stop({ drain: false });
  for (const s of open.splice(0)) await s.close();
});

async function runtime(): Promise<DurableRuntime> {
  const store = await pgliteStore({ db: await db, schema: `rt_${++n}` });
  open.push(store);
  return createDurableRuntime({ store });
}

async function started(rt: DurableRuntime, options: Parameters<DurableRuntime["worker"]>[0] = {}) {
  const worker = rt.worker({ leaseMs: 3_000, ...options });
  workers.push(worker);
  await worker.start();
  return worker;
}

class Triage extends DurableWorkflow {
  @step({ entry: true, next: "route" })
  async read(session: Session, ctx: StepContext) {
    await ctx.emit("step.progress", { step: ctx.stepId });
    return session.append({ kind: "assistant", content: "read it", author: "reader" });
  }

  @router({ successors: ["refund", "answer"] })
  route(session: Session) {
    return session.chunks[0]?.kind === "user" && session.chunks[0].content.includes("refund")
      ? "refund"
      : "answer";
  }

  @step()
  async refund(session: Session) {
    return session.append({ kind: "assistant", content: "refunded", author: "refunds" });
  }

  @step()
  async answer(session: Session) {
    return session.append({ kind: "assistant", content: "answered", author: "writer" });
  }
}

describe("durable runtime on PGlite", () => {
  it("runs a decorated workflow to the end through its router, with gap-free events and a restorable result", async () => {
    const rt = await runtime();
    const plan = await rt.register(new Triage());
    expect([...plan.nodes.keys()].sort()).toEqual(["answer", "read", "refund", "route"]);
    await started(rt);
    const run = await rt.submit("Triage", Session.fromUserMessage("I want a refund"));
    const out = await rt.result(run.id);
    expect(out.chunks.map((c) => (c as { content?: string }).content)).toEqual([
      "I want a refund",
      "read it",
      "refunded",
    ]);
    const events = await rt.store.readEvents(run.id);
    expect(events.map((e) => e.seq)).toEqual(events.map((_, i) => i + 1));
    expect(events.map((e) => e.type)).toEqual([
      "run.created",
      "run.claimed",
      "step.progress",
      "run.checkpoint",
      "run.checkpoint",
      "run.state.changed",
    ]);
    expect((await rt.get(run.id))!.checkpointSeq).toBe(3);
    expect(JSON.stringify((await rt.session(run.id)).toJSON())).toBe(JSON.stringify(out.toJSON()));
  });

  it("the functional builder compiles to the same kind of plan and runs the same way", async () => {
    const rt = await runtime();
    const flow = defineWorkflow("triage-fn")
      .step("read", (s) => s.append({ kind: "assistant", content: "read it" }), {
        entry: true,
        next: "route",
      })
      .router("route", () => "answer", { successors: ["answer"] })
      .step("answer", (s) => s.append({ kind: "assistant", content: "answered" }));
    const plan = await rt.register(flow);
    expect(plan.entry).toBe("read");
    await started(rt);
    const out = await rt.result((await rt.submit("triage-fn", Session.fromUserMessage("hi"))).id);
    expect(out.text()).toBe("answered");
    expect(await new Triage().run(Session.fromUserMessage("no refund"))).toBeInstanceOf(Session);
  });

  it("retries a failing step durably with backoff, attempt numbers in the context", async () => {
    const rt = await runtime();
    const attempts: number[] = [];
    await rt.register(
      defineWorkflow("flaky").step(
        "call",
        (s, ctx) => {
          attempts.push(ctx.attempt);
          if (ctx.attempt < 3) throw new Error(`transient ${ctx.attempt}`);
          return s.append({ kind: "assistant", content: "finally" });
        },
        { entry: true, retry: { maxAttempts: 3, baseMs: 50 } },
      ),
    );
    await started(rt);
    const run = await rt.submit("flaky", Session.fromUserMessage("try"));
    expect((await rt.result(run.id)).text()).toBe("finally");
    expect(attempts).toEqual([1, 2, 3]);
    const retries = (await rt.store.readEvents(run.id)).filter((e) => e.type === "run.retry.scheduled");
    expect(retries.map((e) => (e.data as { attempt: number }).attempt)).toEqual([2, 3]);
  });

  it("a step returning a non-Session fails that run with step_not_session; other runs are unharmed", async () => {
    const rt = await runtime();
    await rt.register(
      defineWorkflow("bad").step("oops", () => ({ not: "a session" }) as never, {
        entry: true,
        retry: { maxAttempts: 3 },
      }),
    );
    await rt.register(
      defineWorkflow("good").step("fine", (s) => s.append({ kind: "assistant", content: "ok" }), {
        entry: true,
      }),
    );
    await started(rt);
    const bad = await rt.submit("bad", Session.fromUserMessage("x"));
    const good = await rt.submit("good", Session.fromUserMessage("y"));
    const ended = await rt.wait(bad.id);
    expect(ended).toMatchObject({ status: "failed", error: { code: "step_not_session", stepId: "oops" } });
    expect(ended.attempt).toBe(1);
    expect((await rt.result(good.id)).text()).toBe("ok");
  });

  it("cancel reaches the running step's AbortSignal within a second", async () => {
    const rt = await runtime();
    let aborted = 0;
    let started_ = 0;
    await rt.register(
      defineWorkflow("long").step(
        "wait",
        (s, ctx) =>
          new Promise<Session>((resolve, reject) => {
            started_ = Date.now();
            ctx.signal.addEventListener("abort", () => {
              aborted = Date.now();
              reject(ctx.signal.reason);
            });
            setTimeout(() => resolve(s), 20_000);
          }),
        { entry: true },
      ),
    );
    await started(rt, { leaseMs: 30_000 });
    const run = await rt.submit("long", Session.fromUserMessage("x"));
    while (started_ === 0) await new Promise((r) => setTimeout(r, 10));
    const cancelledAt = Date.now();
    await rt.cancel(run.id, "user changed their mind");
    while (aborted === 0) await new Promise((r) => setTimeout(r, 10));
    expect(aborted - cancelledAt).toBeLessThan(1_000);
    expect(await rt.wait(run.id)).toMatchObject({
      status: "cancelled",
      error: { message: "user changed their mind" },
    });
  });

  it("a run past its deadline times out, folded into the step's signal", async () => {
    const rt = await runtime();
    await rt.register(
      defineWorkflow("slow").step(
        "wait",
        (s, ctx) =>
          new Promise<Session>((resolve, reject) => {
            ctx.signal.addEventListener("abort", () => reject(ctx.signal.reason));
            setTimeout(() => resolve(s), 20_000);
          }),
        { entry: true },
      ),
    );
    await started(rt);
    const run = await rt.submit("slow", Session.fromUserMessage("x"), { deadline: Date.now() + 400 });
    expect(await rt.wait(run.id)).toMatchObject({
      status: "timed_out",
      error: { code: "deadline_exceeded" },
    });
  });

  it("an isolated step that ignores its signal is stopped at its hard timeout", async () => {
    const rt = await runtime();
    const dir = mkdtempSync(join(tmpdir(), "openrath-isolated-"));
    const spin = join(dir, "spin.mjs");
    writeFileSync(spin, "export default function spin() { for (;;) {} }\n");
    const grow = join(dir, "grow.mjs");
    writeFileSync(
      grow,
      `export async function grow(session, ctx) {
  const chunk = { id: "isolated-" + ctx.runId, kind: "assistant", content: "from a thread", createdAt: 1, sessionId: session.id };
  return { ...session, chunks: [...session.chunks, chunk] };
}\n`,
    );
    await rt.register(
      defineWorkflow("spin").step("spin", (s) => s, {
        entry: true,
        timeoutMs: 300,
        isolated: { module: spin },
      }),
    );
    await rt.register(
      defineWorkflow("grow").step("grow", (s) => s, {
        entry: true,
        timeoutMs: 5_000,
        isolated: { module: grow, export: "grow" },
      }),
    );
    await started(rt);
    const t0 = Date.now();
    const spun = await rt.submit("spin", Session.fromUserMessage("x"));
    expect(await rt.wait(spun.id)).toMatchObject({
      status: "timed_out",
      error: { code: "step_timeout", stepId: "spin" },
    });
    expect(Date.now() - t0).toBeLessThan(3_000);
    const grown = await rt.result((await rt.submit("grow", Session.fromUserMessage("y"))).id);
    expect(grown.text()).toBe("from a thread");
  });

  it("a worker that loses its lease aborts the step at its next heartbeat", async () => {
    const rt = await runtime();
    let reason: unknown;
    let running = false;
    await rt.register(
      defineWorkflow("held").step(
        "wait",
        (s, ctx) =>
          new Promise<Session>((resolve, reject) => {
            running = true;
            ctx.signal.addEventListener("abort", () => {
              reason = ctx.signal.reason;
              reject(ctx.signal.reason);
            });
            setTimeout(() => resolve(s), 20_000);
          }),
        { entry: true },
      ),
    );
    const worker = await started(rt, { leaseMs: 600, workerId: "holder" });
    const run = await rt.submit("held", Session.fromUserMessage("x"));
    while (!running) await new Promise((r) => setTimeout(r, 10));
    // Another incarnation of the identity takes the lease: the holder's token is now stale.
    const taken = await rt.store.reclaim({
      workerId: "holder",
      planHashes: worker.planHashes,
      leaseMs: 60_000,
    });
    expect(taken.length).toBe(1);
    const t0 = Date.now();
    while (reason === undefined) await new Promise((r) => setTimeout(r, 10));
    expect(Date.now() - t0).toBeLessThan(600);
    expect(OpenRathError.isInstance(reason, "lease_lost")).toBe(true);
    expect((await rt.get(run.id))!.status).toBe("running");
  });

  it("runs several runs at once up to the worker's concurrency", async () => {
    const rt = await runtime();
    let inFlight = 0;
    let peak = 0;
    await rt.register(
      defineWorkflow("parallel").step(
        "work",
        async (s) => {
          inFlight++;
          peak = Math.max(peak, inFlight);
          await new Promise((r) => setTimeout(r, 150));
          inFlight--;
          return s;
        },
        { entry: true },
      ),
    );
    await started(rt, { concurrency: 4 });
    const runs = await Promise.all(
      Array.from({ length: 8 }, () => rt.submit("parallel", Session.fromUserMessage("x"))),
    );
    for (const run of runs) expect((await rt.wait(run.id)).status).toBe("succeeded");
    expect(peak).toBe(4);
  });

  it("two revisions run side by side: a worker claims only the plans it holds", async () => {
    const rt = await runtime();
    const v1 = await rt.register(
      defineWorkflow("deploy").step("go", (s) => s.append({ kind: "assistant", content: "v1" }), {
        entry: true,
      }),
    );
    const v2 = await rt.register(
      defineWorkflow("deploy", { version: "2" }).step(
        "go",
        (s) => s.append({ kind: "assistant", content: "v2" }),
        {
          entry: true,
        },
      ),
    );
    expect(v1.hash).not.toBe(v2.hash);
    const old = await rt.submit(v1, Session.fromUserMessage("old"));
    await started(rt, { plans: [v2] });
    const fresh = await rt.submit("deploy", Session.fromUserMessage("new"));
    expect((await rt.result(fresh.id)).text()).toBe("v2");
    expect((await rt.get(old.id))!.status).toBe("queued");
    await started(rt, { plans: [v1] });
    expect((await rt.result(old.id)).text()).toBe("v1");
  });

  it("bad input is a coded error on that run only: unknown plan, failing definition, corrupt checkpoint", async () => {
    const rt = await runtime();
    await expect(rt.submit("f".repeat(64), Session.fromUserMessage("x"))).rejects.toMatchObject({
      code: "unknown_plan",
    });
    await expect(rt.submit("nope", Session.fromUserMessage("x"))).rejects.toMatchObject({
      code: "unknown_plan",
    });
    await expect(
      rt.register(
        defineWorkflow("broken")
          .step("a", (s) => s, { entry: true, next: "missing" })
          .step("b", (s) => s),
      ),
    ).rejects.toMatchObject({
      code: "invalid_definition",
      details: {
        problems: [
          expect.stringMatching(/unknown successor "missing"/),
          expect.stringMatching(/"b" is not reachable/),
        ],
      },
    });
    const ok = defineWorkflow("ok").step("a", (s) => s.append({ kind: "assistant", content: "fine" }), {
      entry: true,
    });
    await rt.register(ok);
    const corrupt = await rt.submit("ok", Session.fromUserMessage("will be corrupted"));
    const healthy = await rt.submit("ok", Session.fromUserMessage("healthy"));
    // A chunk list naming 99 chunks of a base it does not have.
    await sql`update ${sql.table(`rt_${n}.checkpoints`)} set body = '\\x00'::bytea || convert_to('{"s":"x","o":[[0,99]]}', 'UTF8') where run_id = ${corrupt.id}`.execute(
      // biome-ignore lint/suspicious/noExplicitAny: a raw handle on the same embedded database.
      new (await import("kysely")).Kysely<any>({
        dialect: new (await import("./driver/pglite-dialect.js")).PGliteDialect(await db),
      }),
    );
    // A worker of another runtime (another process): it must read the checkpoint the runtime that
    // submitted would have handed over from memory.
    const elsewhere = createDurableRuntime({ store: rt.store });
    await elsewhere.register(ok);
    await started(elsewhere);
    expect(await rt.wait(corrupt.id)).toMatchObject({
      status: "failed",
      error: { code: "corrupt_checkpoint" },
    });
    expect((await rt.result(healthy.id)).text()).toBe("fine");
  });

  it("a resubmitted request under its key is the first run even as a rebuilt Session; other content is idempotency_conflict", async () => {
    const rt = await runtime();
    await rt.register(new Triage());
    await started(rt);
    const first = await rt.submit("Triage", Session.fromUserMessage("I want a refund"), {
      idempotencyKey: "t-1",
    });
    await rt.result(first.id);
    // A client retrying rebuilds the Session: new ids and times, the same conversation.
    const again = await rt.submit("Triage", Session.fromUserMessage("I want a refund"), {
      idempotencyKey: "t-1",
    });
    expect(again.id).toBe(first.id);
    await expect(
      rt.submit("Triage", Session.fromUserMessage("I want two refunds"), { idempotencyKey: "t-1" }),
    ).rejects.toMatchObject({ code: "idempotency_conflict" });
    await expect(
      rt.submit("Triage", Session.fromUserMessage("I want a refund"), { idempotencyKey: "t-1", priority: 5 }),
    ).rejects.toMatchObject({ code: "idempotency_conflict" });
    expect(await rt.store.listRuns({ tenantId: "default" })).toHaveLength(1);
  });

  it("follow yields the stored events from the start, gap-free and in order, and ends with the run", async () => {
    const rt = await runtime();
    await rt.register(new Triage());
    const run = await rt.submit("Triage", Session.fromUserMessage("I want a refund"));
    const seen: number[] = [];
    const followed = (async () => {
      for await (const event of rt.follow(run.id)) seen.push(event.seq);
    })();
    await started(rt);
    await followed;
    const final = await rt.wait(run.id);
    expect(final.status).toBe("succeeded");
    expect(seen).toEqual(Array.from({ length: final.eventSeq }, (_, i) => i + 1));
  });

  it("steps run ahead of a slow commit: the steps that finish meanwhile commit together, ctx.checkpointed() waits for them, and the run is the same", async () => {
    const store = await pgliteStore({ db: await db, schema: `rt_${++n}` });
    open.push(store);
    const batches: number[] = [];
    const slow =
      (commit: (...args: unknown[]) => Promise<unknown>, size: (args: unknown[]) => number) =>
      async (...args: unknown[]) => {
        await new Promise((r) => setTimeout(r, 30));
        batches.push(size(args));
        return commit(...args);
      };
    // The real store, with every step commit held back 30 ms before it is sent.
    const held = new Proxy(store, {
      get(target, key) {
        const value = Reflect.get(target, key, target);
        if (key === "commitStep") return slow(value.bind(target), () => 1);
        if (key === "groupCommit")
          return { ...value, commitSteps: slow(value.commitSteps, (args) => (args[1] as unknown[]).length) };
        return typeof value === "function" ? value.bind(target) : value;
      },
    });
    const rt = createDurableRuntime({ store: held });
    const seqAfterWait: number[] = [];
    const flow = defineWorkflow("ahead");
    for (let i = 0; i < 6; i++) {
      flow.step(
        `s${i}`,
        async (session, ctx) => {
          if (i === 3) {
            await ctx.checkpointed();
            seqAfterWait.push((await store.getRun(ctx.runId))!.checkpointSeq);
          }
          return session.append({ kind: "assistant", content: `step ${i}` });
        },
        { entry: i === 0, ...(i < 5 ? { next: `s${i + 1}` } : {}) },
      );
    }
    await rt.register(flow);
    await started(rt);
    const run = await rt.submit("ahead", Session.fromUserMessage("go"));
    const out = await rt.result(run.id);
    expect(out.chunks.map((c) => (c as { content?: string }).content)).toEqual([
      "go",
      ...Array.from({ length: 6 }, (_, i) => `step ${i}`),
    ]);
    // s3 waited for the checkpoints of s0..s2; s1 and s2 finished while s0's commit was held.
    expect(seqAfterWait).toEqual([3]);
    expect(batches).toEqual([1, 2, 1, 1]);
    const events = await store.readEvents(run.id);
    expect(events.map((e) => e.seq)).toEqual(Array.from({ length: events.length }, (_, i) => i + 1));
    expect(events.filter((e) => e.type === "run.checkpoint")).toHaveLength(5);
    for (let seq = 1; seq <= 6; seq++) {
      const back = await store.loadCheckpoint(run.id, seq);
      expect(back?.chunkIds).toHaveLength(seq + 1);
    }
  });

  it("close() stops the runtime's workers, giving their runs back, and closes the store", async () => {
    const store = await pgliteStore({ db: await db, schema: `rt_${++n}` });
    const rt = createDurableRuntime({ store });
    let entered!: () => void;
    const inStep = new Promise<void>((resolve) => {
      entered = resolve;
    });
    await rt.register(
      defineWorkflow("slow").step(
        "wait",
        async (session, ctx) => {
          entered();
          await new Promise((_, reject) =>
            ctx.signal.addEventListener("abort", () => reject(ctx.signal.reason)),
          );
          return session;
        },
        { entry: true },
      ),
    );
    const worker = rt.worker({ leaseMs: 3_000 });
    await worker.start();
    const run = await rt.submit("slow", Session.fromUserMessage("hold on"));
    await inStep;
    await rt.close({ drain: false });
    await rt.close();
    expect(() => rt.worker()).toThrow(expect.objectContaining({ code: "runtime_closed" }));
    await expect(store.getRun(run.id)).rejects.toMatchObject({ code: "store_unavailable" });
    // The run was given back to the queue, for the next process.
    const reopened = await pgliteStore({ db: await db, schema: `rt_${n}` });
    open.push(reopened);
    expect(await reopened.getRun(run.id)).toMatchObject({ status: "queued" });
  });
});
