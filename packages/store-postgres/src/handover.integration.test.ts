import { Session } from "@openrath/core";
import { createDurableRuntime, type DurableRuntime } from "@openrath/runtime-durable";
import type { RunStoreV1 } from "@openrath/runtime-durable/store";
import pg from "pg";
import { afterEach, describe, expect, it } from "vitest";
import { postgresStore } from "./postgres-store.js";
import { FAULT_LOG_DDL, FAULT_STEPS } from "./testing/fault-workflow.js";
import { POSTGRES_URL, postgres } from "./testing/postgres-url.js";
import { spawnWorker, type WorkerProcess } from "./testing/worker-processes.js";

// Leases far longer than the test waits: a run can only move to the second worker because the
// first handed it over, never because its lease expired.
const LEASE_MS = 20_000;
const STEPS = 6;

const children: WorkerProcess[] = [];
const opened: { close(): Promise<void> }[] = [];
afterEach(async () => {
  for (const child of children.splice(0)) {
    child.child.kill("SIGKILL");
    await child.exited;
  }
  for (const o of opened.splice(0)) await o.close();
});

let n = 0;
async function setUp() {
  const schema = `handover_${process.pid}_${++n}`;
  const admin = new pg.Client({ connectionString: POSTGRES_URL });
  await admin.connect();
  await admin.query(FAULT_LOG_DDL);
  await admin.end();
  const store: RunStoreV1 = await postgresStore({ connectionString: POSTGRES_URL!, schema, migrate: true });
  const runtime: DurableRuntime = createDurableRuntime({ store });
  opened.push(runtime);
  const log = new pg.Pool({ connectionString: POSTGRES_URL, max: 2 });
  opened.push({ close: () => log.end() });
  return { schema, runtime, log };
}

async function worker(schema: string, workerId: string, stepMs: number, drainMs: number) {
  const w = await spawnWorker({
    url: POSTGRES_URL!,
    schema,
    workerId,
    stepMs,
    leaseMs: LEASE_MS,
    concurrency: 4,
    steps: STEPS,
    drainMs,
  });
  children.push(w);
  return { worker: w, plan: await w.ready };
}

type LogRow = { run_id: string; step: string; worker: string; what: string };

async function logOf(log: pg.Pool, ids: readonly string[]): Promise<LogRow[]> {
  const { rows } = await log.query<LogRow>(
    "select run_id::text, step, worker, what from fault_log where run_id = any($1::uuid[]) order by id",
    [ids],
  );
  return rows;
}

async function until(check: () => Promise<boolean>, what: string, ms = 30_000) {
  const end = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > end) throw new Error(`timed out waiting until ${what}`);
    await new Promise((r) => setTimeout(r, 25));
  }
}

/** When the run was handed back (its `released` event) and when it was claimed next, database clock. */
async function handover(log: pg.Pool, schema: string, runId: string) {
  const { rows } = await log.query<{ type: string; data: string; at: Date }>(
    `select type, data, at from "${schema}".run_events where run_id = $1 order by seq`,
    [runId],
  );
  const released = rows.findIndex(
    (e) => e.type === "run.state.changed" && JSON.parse(e.data)?.reason === "released",
  );
  const claimed = rows.findIndex((e, i) => i > released && e.type === "run.claimed");
  return {
    released: released >= 0 ? rows[released]!.at.getTime() : undefined,
    claimed: claimed >= 0 ? rows[claimed]!.at.getTime() : undefined,
  };
}

describe.skipIf(!postgres.available)(`shutdown hands the work over (${postgres.reason})`, () => {
  it("SIGTERM mid-run: the step in flight finishes and commits, the run continues on the idle worker within a second, no committed step runs again", async () => {
    const { schema, runtime, log } = await setUp();
    const a = await worker(schema, "a", 400, 10_000);
    const ids: string[] = [];
    for (let i = 0; i < 3; i++)
      ids.push((await runtime.submit(a.plan, Session.fromUserMessage(`job ${i}`))).id);
    // Every run is on its second or third step at A when A is told to stop.
    await until(async () => {
      const rows = await logOf(log, ids);
      return ids.every((id) => rows.some((r) => r.run_id === id && r.step === "two"));
    }, "every run reached step two on worker a");
    const b = await worker(schema, "b", 400, 10_000);
    expect(b.plan).toBe(a.plan);
    a.worker.child.kill("SIGTERM");
    await a.worker.exited;
    expect(a.worker.child.exitCode).toBe(0);

    const ended = await Promise.all(
      ids.map((id) => runtime.wait(id, { signal: AbortSignal.timeout(30_000) })),
    );
    for (const run of ended) expect(run.status).toBe("succeeded");
    const rows = await logOf(log, ids);
    for (const id of ids) {
      const starts = rows.filter((r) => r.run_id === id && r.what === "start");
      // Each step ran exactly once: the one in flight at the SIGTERM finished on A and was not repeated on B.
      expect(starts.map((r) => r.step)).toEqual(FAULT_STEPS.slice(0, STEPS));
      expect(rows.filter((r) => r.run_id === id && r.what === "aborted")).toEqual([]);
      const workers = new Set(starts.map((r) => r.worker));
      expect(workers).toEqual(new Set(["a", "b"]));
      const final = await runtime.session(id);
      expect(final.chunks.filter((c) => c.kind === "assistant").map((c) => c.author)).toEqual(
        FAULT_STEPS.slice(0, STEPS),
      );
      const { released, claimed } = await handover(log, schema, id);
      expect(released).toBeDefined();
      expect(claimed).toBeDefined();
      // Taken by B as soon as A gave it back: within a second, with a 20 s lease.
      expect(claimed! - released!).toBeLessThan(1000);
    }
  });

  it("a step still running at the drain deadline is aborted and its run handed over; only that uncommitted step runs again", async () => {
    const { schema, runtime, log } = await setUp();
    const a = await worker(schema, "a", 1500, 200);
    const run = await runtime.submit(a.plan, Session.fromUserMessage("slow"));
    await until(
      async () => (await logOf(log, [run.id])).some((r) => r.step === "two" && r.what === "start"),
      "the run started step two on worker a",
    );
    // Stopped at once, while step two (1.5 s) runs: a 200 ms drain cannot let it finish. B starts
    // only after A is gone, so how long a process takes to start on a loaded machine does not matter.
    a.worker.child.kill("SIGTERM");
    await a.worker.exited;
    // Handed back, not left to its 20 s lease: queued again the moment A exits.
    expect((await runtime.get(run.id))?.status).toBe("queued");
    expect((await handover(log, schema, run.id)).released).toBeDefined();
    const b = await worker(schema, "b", 50, 10_000);
    expect(b.plan).toBe(a.plan);
    expect((await runtime.wait(run.id, { signal: AbortSignal.timeout(30_000) })).status).toBe("succeeded");
    const rows = await logOf(log, [run.id]);
    const startsOf = (step: string) => rows.filter((r) => r.step === step && r.what === "start");
    expect(startsOf("one").map((r) => r.worker)).toEqual(["a"]);
    // Step two was in flight past the deadline: aborted on A, run again on B.
    expect(rows.filter((r) => r.what === "aborted").map((r) => [r.step, r.worker])).toEqual([["two", "a"]]);
    expect(startsOf("two").map((r) => r.worker)).toEqual(["a", "b"]);
    for (const step of FAULT_STEPS.slice(2, STEPS))
      expect(startsOf(step).map((r) => r.worker)).toEqual(["b"]);
  });
});
