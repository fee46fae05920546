import { randomBytes } from "node:crypto";
import { existsSync, readdirSync } from "node:fs";
import { join } from "node:path";
import { Session } from "@openrath/core";
import { createDurableRuntime, type DurableRuntime, defineWorkflow } from "@openrath/runtime-durable";
import { isTerminal, type RunStoreV1 } from "@openrath/runtime-durable/store";
import pg from "pg";
import { afterEach, describe, expect, it } from "vitest";
import { postgresStore } from "./postgres-store.js";
import { FAULT_LOG_DDL, FAULT_STEPS } from "./testing/fault-workflow.js";
import { startPgCluster } from "./testing/pg-cluster.js";
import { POSTGRES_URL, postgres } from "./testing/postgres-url.js";
import { spawnWorker, type WorkerProcess } from "./testing/worker-processes.js";

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const between = (lo: number, hi: number) => lo + Math.floor(Math.random() * (hi - lo));

function postgresBin(): string | undefined {
  if (process.env.OPENRATH_TEST_POSTGRES_BIN) return process.env.OPENRATH_TEST_POSTGRES_BIN;
  const root = "/usr/lib/postgresql";
  if (!existsSync(root)) return undefined;
  const version = readdirSync(root).sort().at(-1);
  return version ? join(root, version, "bin") : undefined;
}

const cleanup: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const fn of cleanup.splice(0).reverse()) await fn();
});

/** A schema, a store and a runtime on `url` for one test, with the fault log table. */
async function setUp(url: string) {
  const schema = `faults_${randomBytes(5).toString("hex")}`;
  const log = new pg.Pool({ connectionString: url, max: 2 });
  log.on("error", () => {});
  log.on("connect", (client) => {
    client.on("error", () => {});
  });
  await log.query(FAULT_LOG_DDL);
  const store = await postgresStore({ connectionString: url, schema, migrate: true });
  const runtime = createDurableRuntime({ store });
  cleanup.push(async () => {
    await store.close();
    await log.end();
  });
  return { schema, log, store, runtime };
}

function track(worker: WorkerProcess): WorkerProcess {
  cleanup.push(() => {
    worker.child.kill("SIGKILL");
  });
  return worker;
}

async function waitAll(runtime: DurableRuntime, ids: readonly string[], timeoutMs: number) {
  const signal = AbortSignal.timeout(timeoutMs);
  return Promise.all(ids.map((id) => runtime.wait(id, { signal })));
}

/**
 * The batch invariants: every run succeeded exactly once, checkpoints 0..steps without gap or
 * duplicate, one chunk per step, and no step started again after its checkpoint committed.
 */
async function expectExactlyOnce(
  store: RunStoreV1,
  schema: string,
  log: pg.Pool,
  ids: readonly string[],
  steps = 3,
) {
  for (const id of ids) {
    const run = await store.getRun(id);
    expect(run?.status, `run ${id}`).toBe("succeeded");
    const events = await store.readEvents(id, { limit: 10_000 });
    expect(events.map((e) => e.seq)).toEqual(events.map((_, i) => i + 1));
    expect(
      events.filter((e) => e.type === "run.state.changed" && (e.data as { to?: string }).to === "succeeded")
        .length,
    ).toBe(1);
    const session = (await store.loadCheckpoint(id))!;
    expect(session.chunks.map((c) => c.kind)).toEqual(["user", ...Array(steps).fill("assistant")]);
  }
  const checkpoints = await log.query(
    `select run_id, array_agg(seq order by seq) as seqs from ${schema}.checkpoints where run_id = any($1::uuid[]) group by run_id`,
    [ids],
  );
  expect(checkpoints.rows.length).toBe(ids.length);
  for (const row of checkpoints.rows)
    expect(row.seqs.map(Number)).toEqual(Array.from({ length: steps + 1 }, (_, i) => i));
  const reruns = await log.query(
    `select f.run_id, f.step, f.worker, f.at, k.created_at from fault_log f
       join ${schema}.checkpoints k on k.run_id = f.run_id and k.seq = array_position($2::text[], f.step)
     where f.what = 'start' and f.run_id = any($1::uuid[]) and f.at >= k.created_at`,
    [ids, FAULT_STEPS],
  );
  expect(reruns.rows, "steps started again after their checkpoint committed").toEqual([]);
}

describe.skipIf(!postgres.available)(`faults against PostgreSQL (${postgres.reason})`, () => {
  it("kill -9 of worker processes at random points 200 times: every run succeeds exactly once", async () => {
    const { schema, log, store, runtime } = await setUp(POSTGRES_URL!);
    const spawnOne = (workerId: string) =>
      spawnWorker({ url: POSTGRES_URL!, schema, workerId, stepMs: 40, leaseMs: 1_000, concurrency: 4 }).then(
        track,
      );
    const workers = await Promise.all(["w0", "w1", "w2"].map(spawnOne));
    // The workers' plan (their bundled code hashes differently from this file's transform).
    const [plan] = await Promise.all(workers.map((w) => w.ready));
    const ids: string[] = [];
    const submitBatch = async (count: number) => {
      for (let i = 0; i < count; i++)
        ids.push((await runtime.submit(plan!, Session.fromUserMessage(`job ${ids.length}`))).id);
    };
    await submitBatch(150);
    let sameIdentity = 0;
    for (let kills = 1; kills <= 200; kills++) {
      await sleep(between(20, 120));
      const slot = between(0, workers.length);
      const victim = workers[slot]!;
      victim.child.kill("SIGKILL");
      await victim.exited;
      const reuse = Math.random() < 0.7;
      if (reuse) sameIdentity++;
      workers[slot] = await spawnOne(reuse ? victim.id : `w${slot}-${kills}`);
      if (kills % 20 === 0) {
        const open = await store.listRuns({ tenantId: "default", status: ["queued", "running"], limit: 500 });
        if (open.length < 20) await submitBatch(40);
      }
    }
    await Promise.all(workers.map((w) => w.ready.catch(() => {})));
    const ended = await waitAll(runtime, ids, 120_000);
    expect(ended.every((r) => isTerminal(r.status))).toBe(true);
    await expectExactlyOnce(store, schema, log, ids);
    const restarts = await log.query(
      "select count(*)::int as n from fault_log where what = 'start' and run_id = any($1::uuid[])",
      [ids],
    );
    // Some steps had to run again after a kill: the batch really was interrupted.
    expect(restarts.rows[0].n).toBeGreaterThan(ids.length * 3);
    expect(sameIdentity).toBeGreaterThan(0);
  }, 300_000);

  it("kill -9 while step commits are batched behind the steps: every run succeeds exactly once, no checkpoint lost or repeated", async () => {
    const { schema, log, store, runtime } = await setUp(POSTGRES_URL!);
    const STEPS = 6;
    // Steps that wait for nothing and a database slowed by 15 ms per commit: the steps that finish
    // during a commit go in one batch, and kills land between a batch's steps and its commit.
    const spawnOne = (workerId: string) =>
      spawnWorker({
        url: POSTGRES_URL!,
        schema,
        workerId,
        stepMs: 2,
        leaseMs: 1_000,
        concurrency: 4,
        steps: STEPS,
        emit: false,
        holdMs: 15,
      }).then(track);
    const workers = await Promise.all(["p0", "p1"].map(spawnOne));
    const [plan] = await Promise.all(workers.map((w) => w.ready));
    const ids: string[] = [];
    for (let i = 0; i < 120; i++)
      ids.push((await runtime.submit(plan!, Session.fromUserMessage(`batched ${i}`))).id);
    for (let kills = 1; kills <= 30; kills++) {
      await sleep(between(10, 60));
      const slot = between(0, workers.length);
      const victim = workers[slot]!;
      victim.child.kill("SIGKILL");
      await victim.exited;
      workers[slot] = await spawnOne(Math.random() < 0.7 ? victim.id : `p${slot}-${kills}`);
    }
    await Promise.all(workers.map((w) => w.ready.catch(() => {})));
    const ended = await waitAll(runtime, ids, 120_000);
    expect(ended.every((r) => isTerminal(r.status))).toBe(true);
    await expectExactlyOnce(store, schema, log, ids, STEPS);
    // Batches happened: checkpoints committed in one transaction share its start time.
    const batched = await log.query(
      `select count(*)::int as n from (select run_id, created_at from ${schema}.checkpoints
         where run_id = any($1::uuid[]) and seq > 0 group by 1, 2 having count(*) > 1) b`,
      [ids],
    );
    expect(batched.rows[0].n).toBeGreaterThan(0);
    // And kills interrupted runs: some steps ran again.
    const starts = await log.query(
      "select count(*)::int as n from fault_log where what = 'start' and run_id = any($1::uuid[])",
      [ids],
    );
    expect(starts.rows[0].n).toBeGreaterThan(ids.length * STEPS);
  }, 300_000);

  it("a worker paused past its lease (SIGSTOP) has every write rejected and stops its step when resumed", async () => {
    const { schema, log, store, runtime } = await setUp(POSTGRES_URL!);
    const a = track(
      await spawnWorker({
        url: POSTGRES_URL!,
        schema,
        workerId: "paused",
        stepMs: 1_500,
        leaseMs: 800,
        concurrency: 1,
      }),
    );
    const plan = await a.ready;
    const run = await runtime.submit(plan, Session.fromUserMessage("contested"));
    while (
      (await log.query("select 1 from fault_log where run_id = $1 and worker = 'paused'", [run.id])).rows
        .length === 0
    )
      await sleep(20);
    a.child.kill("SIGSTOP");
    const b = track(
      await spawnWorker({
        url: POSTGRES_URL!,
        schema,
        workerId: "successor",
        stepMs: 1_500,
        leaseMs: 800,
        concurrency: 1,
      }),
    );
    await b.ready;
    while (
      (await log.query("select 1 from fault_log where run_id = $1 and worker = 'successor'", [run.id])).rows
        .length === 0
    )
      await sleep(20);
    const takeover = (await store.readEvents(run.id)).filter((e) => e.type === "run.claimed").at(-1)!;
    a.child.kill("SIGCONT");
    const ended = await runtime.wait(run.id, { signal: AbortSignal.timeout(60_000) });
    expect(ended.status).toBe("succeeded");
    let stopped = (
      await log.query(
        "select what from fault_log where run_id = $1 and worker = 'paused' and what <> 'start'",
        [run.id],
      )
    ).rows;
    for (let i = 0; i < 50 && stopped.length === 0; i++) {
      await sleep(100);
      stopped = (
        await log.query(
          "select what from fault_log where run_id = $1 and worker = 'paused' and what <> 'start'",
          [run.id],
        )
      ).rows;
    }
    // Resumed, it either learns of the loss at its next heartbeat (aborted) or its first write is
    // refused (emit_rejected) — and then stops: nothing else of the step happens.
    expect(stopped.length).toBeGreaterThan(0);
    for (const row of stopped) expect(["aborted", "emit_rejected"]).toContain(row.what);
    const events = await store.readEvents(run.id);
    const fromPaused = events.filter(
      (e) => e.seq > takeover.seq && JSON.stringify(e.data).includes('"paused"'),
    );
    expect(fromPaused).toEqual([]);
    const final = (await store.loadCheckpoint(run.id))!;
    expect(final.chunks.slice(1).map((c) => (c as { content?: string }).content)).toEqual([
      "one by successor",
      "two by successor",
      "three by successor",
    ]);
    await expectExactlyOnce(store, schema, log, [run.id]);
  }, 120_000);

  it("bad input is a coded error on that run only: unknown plan, failing definition, non-Session step, corrupt checkpoint", async () => {
    const { schema, log, runtime } = await setUp(POSTGRES_URL!);
    await expect(runtime.submit("e".repeat(64), Session.fromUserMessage("x"))).rejects.toMatchObject({
      code: "unknown_plan",
    });
    await expect(
      runtime.register(defineWorkflow("broken").step("a", (s) => s, { entry: true, next: "nowhere" })),
    ).rejects.toMatchObject({ code: "invalid_definition" });
    const definitions = new Map([
      ["liar", defineWorkflow("liar").step("a", () => "not a session" as never, { entry: true })],
      [
        "fine",
        defineWorkflow("fine").step("a", (s) => s.append({ kind: "assistant", content: "fine" }), {
          entry: true,
        }),
      ],
    ]);
    for (const definition of definitions.values()) await runtime.register(definition);
    const liar = await runtime.submit("liar", Session.fromUserMessage("x"));
    const corrupt = await runtime.submit("fine", Session.fromUserMessage("to be corrupted"));
    const healthy = await Promise.all(
      Array.from({ length: 5 }, (_, i) => runtime.submit("fine", Session.fromUserMessage(`ok ${i}`))),
    );
    await log.query(
      `update ${schema}.checkpoints set body = '\\x00'::bytea || convert_to('{not json', 'UTF8') where run_id = $1`,
      [corrupt.id],
    );
    // The worker of another runtime (another process), so every run's checkpoint is read back from
    // the store instead of being handed over from the submitting runtime's memory.
    const elsewhere = createDurableRuntime({ store: runtime.store });
    for (const plan of runtime.plans) await elsewhere.register(definitions.get(plan.name)!);
    const worker = elsewhere.worker({ concurrency: 4, leaseMs: 2_000 });
    await worker.start();
    cleanup.push(() => worker.stop({ drain: false }));
    expect(await runtime.wait(liar.id)).toMatchObject({
      status: "failed",
      error: { code: "step_not_session" },
    });
    expect(await runtime.wait(corrupt.id)).toMatchObject({
      status: "failed",
      error: { code: "corrupt_checkpoint" },
    });
    for (const run of healthy) expect((await runtime.result(run.id)).text()).toBe("fine");
  }, 60_000);

  const bin = postgresBin();
  it.skipIf(!bin)(
    "PostgreSQL restarted mid-batch: workers reconnect, no run is lost or falsely succeeded",
    async () => {
      const cluster = await startPgCluster(bin!);
      cleanup.push(() => cluster.stop());
      const { schema, log, store, runtime } = await setUp(cluster.url);
      const workers = await Promise.all(
        ["r0", "r1"].map((workerId) =>
          spawnWorker({
            url: cluster.url,
            schema,
            workerId,
            stepMs: 80,
            leaseMs: 2_000,
            concurrency: 4,
          }).then(track),
        ),
      );
      const [plan] = await Promise.all(workers.map((w) => w.ready));
      const ids: string[] = [];
      for (let i = 0; i < 60; i++)
        ids.push((await runtime.submit(plan!, Session.fromUserMessage(`job ${i}`))).id);
      await sleep(700);
      cluster.restart();
      const ended = await (async () => {
        for (let attempt = 0; ; attempt++) {
          try {
            return await waitAll(runtime, ids, 90_000);
          } catch (error) {
            // The test's own connections saw the restart too; reading again is what a client does.
            if (attempt > 20) throw error;
            await sleep(250);
          }
        }
      })();
      expect(ended.map((r) => r.status)).toEqual(ids.map(() => "succeeded"));
      await expectExactlyOnce(store, schema, log, ids);
      for (const w of workers) expect(w.child.exitCode, w.stderr()).toBeNull();
    },
    180_000,
  );
});
