import { randomBytes } from "node:crypto";
import { Session } from "@openrath/core";
import { createDurableRuntime } from "@openrath/runtime-durable";
import type { RunStoreV1 } from "@openrath/runtime-durable/store";
import pg from "pg";
import { afterEach, describe, expect, it } from "vitest";
import { postgresStore } from "./postgres-store.js";
import { TURNS, transcript } from "./testing/journal-agent.js";
import {
  type JournalWorkerProcess,
  spawnJournalWorker,
  type WorkerNote,
} from "./testing/journal-processes.js";
import { POSTGRES_URL, postgres } from "./testing/postgres-url.js";

const LEASE_MS = 1500;
const KILLS = Number(process.env.JOURNAL_KILLS ?? 50);

const cleanup: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const fn of cleanup.splice(0).reverse()) await fn();
});

async function setUp(url: string) {
  const schema = `journal_${randomBytes(5).toString("hex")}`;
  const log = new pg.Pool({ connectionString: url, max: 2 });
  log.on("error", () => {});
  const store = await postgresStore({ connectionString: url, schema, migrate: true });
  await log.query(
    `create table ${schema}.journal_log (id bigserial primary key, run_id text not null, worker text not null, pid integer not null, what text not null, turn integer not null)`,
  );
  await log.query(
    `create table ${schema}.journal_outbox (run_id text not null, key text not null, primary key (run_id, key))`,
  );
  const runtime = createDurableRuntime({ store });
  cleanup.push(async () => {
    await store.close();
    await log.query(`drop schema ${schema} cascade`).catch(() => {});
    await log.end();
  });
  // The worker's side tables live in the test's schema: the worker process finds them on its search path.
  const workerUrl = `${url}${url.includes("?") ? "&" : "?"}options=${encodeURIComponent(`-c search_path=${schema}`)}`;
  const q = <T extends pg.QueryResultRow>(text: string, values: unknown[] = []) =>
    log.query<T>(text.replaceAll("{s}", schema), values).then((r) => r.rows);
  return { schema, store, runtime, workerUrl, q };
}

function track(worker: JournalWorkerProcess): JournalWorkerProcess {
  cleanup.push(() => {
    worker.child.kill("SIGKILL");
  });
  return worker;
}

/** Resolves with the first note `match` accepts. */
function nextNote(worker: JournalWorkerProcess, match: (note: WorkerNote) => boolean): Promise<WorkerNote> {
  return new Promise((resolve, reject) => {
    worker.onNote((note) => {
      if (match(note)) resolve(note);
    });
    worker.exited.then(() =>
      reject(new Error(`the worker exited before the awaited note: ${worker.stderr()}`)),
    );
  });
}

/**
 * Waits until the killed worker's database sessions are gone: a statement it sent just before it
 * died may still commit, and the journal is read only after that.
 */
async function backendsGone(
  q: <T extends pg.QueryResultRow>(text: string, values?: unknown[]) => Promise<T[]>,
  pid: number,
): Promise<void> {
  const deadline = Date.now() + 10_000;
  for (;;) {
    const [row] = await q<{ n: string }>(
      "select count(*) as n from pg_stat_activity where application_name = $1",
      [`journal-worker-${pid}`],
    );
    if (Number(row!.n) === 0) return;
    if (Date.now() > deadline) throw new Error(`the sessions of killed worker ${pid} are still open`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

const between = (lo: number, hi: number) => lo + Math.floor(Math.random() * (hi - lo + 1));

if (postgres.available) {
  describe("the journal under kill -9 (worker processes, PostgreSQL)", () => {
    it(`a ten-turn agent killed at a random turn ${KILLS} times repays no provider call, repeats no completed tool call, and ends with the uninterrupted Session`, async () => {
      const { store, runtime, workerUrl, q, schema } = await setUp(POSTGRES_URL!);
      const spawnWorker = () =>
        spawnJournalWorker({
          url: workerUrl,
          schema,
          workerId: "journal-w",
          leaseMs: LEASE_MS,
          mode: "agent",
        }).then(track);
      let worker = await spawnWorker();
      const planHash = await worker.ready;

      // The anchor: the same program, never killed.
      const anchor = await runtime.submit(planHash, Session.fromUserMessage("research this"));
      const uninterrupted = transcript(
        await runtime.result(anchor.id, { signal: AbortSignal.timeout(60_000) }),
      );

      /** What the journal held when a worker died: model turns recorded, tool positions recorded. */
      interface Kill {
        readonly runId: string;
        readonly pid: number;
        readonly models: number;
        readonly tools: ReadonlySet<string>;
      }
      const kills: Kill[] = [];
      const runIds: string[] = [];
      while (kills.length < KILLS) {
        const run = await runtime.submit(planHash, Session.fromUserMessage("research this"));
        runIds.push(run.id);
        // One to three kills per run, each at a random later turn, in a provider call or a tool call.
        const count = Math.min(between(1, 3), KILLS - kills.length);
        const turns = [...new Set(Array.from({ length: count }, () => between(1, TURNS - 1)))].sort(
          (a, b) => a - b,
        );
        for (const turn of turns) {
          const what = Math.random() < 0.5 ? "model" : Math.random() < 0.5 ? "lookup" : "record";
          await nextNote(
            worker,
            (n) => n.runId === run.id && n.turn >= turn && (n.what === what || n.turn > turn),
          );
          const pid = worker.child.pid!;
          await worker.kill();
          await backendsGone(q, pid);
          const recorded = await q<{ kind: string; position: string }>(
            "select kind, position from {s}.journal where run_id = $1",
            [run.id],
          );
          kills.push({
            runId: run.id,
            pid,
            models: recorded.filter((r) => r.kind === "model").length,
            tools: new Set(recorded.filter((r) => r.kind === "tool").map((r) => r.position)),
          });
          // The same identity takes its run back at once: no wait for the lease to expire.
          worker = await spawnWorker();
          await worker.ready;
        }
        const ended = await runtime.wait(run.id, { signal: AbortSignal.timeout(60_000) });
        expect(ended.status, `run ${run.id}: ${JSON.stringify(ended.error)}`).toBe("succeeded");
      }
      await worker.kill();
      expect(kills).toHaveLength(KILLS);

      const log = await q<{ run_id: string; pid: number; what: string; turn: number; id: string }>(
        "select run_id, pid, what, turn, id from {s}.journal_log order by id",
      );
      for (const runId of runIds) {
        const mine = log.filter((l) => l.run_id === runId);
        const pids = [...new Set(mine.map((l) => l.pid))];
        const runKills = kills.filter((k) => k.runId === runId);
        expect(pids.length, `run ${runId} ran in one process per kill plus one`).toBeLessThanOrEqual(
          runKills.length + 1,
        );
        for (const [i, pid] of pids.entries()) {
          const models = mine.filter((l) => l.pid === pid && l.what === "model").map((l) => l.turn);
          const before = runKills.find((k) => k.pid === pids[i - 1]);
          // Each incarnation makes exactly the provider calls not recorded before it: consecutive,
          // starting right after what the journal held when the previous one died.
          const first = before ? before.models + 1 : 1;
          if (models.length > 0)
            expect(models, `run ${runId}, process ${i}`).toEqual(models.map((_, j) => first + j));
          if (before) {
            for (const tool of mine.filter((l) => l.pid === pid && l.what !== "model")) {
              const position = [...before.tools].find((p) =>
                p.endsWith(`/${tool.turn - 1}/${tool.what === "lookup" ? 0 : 1}`),
              );
              expect(
                position,
                `run ${runId}: ${tool.what} of turn ${tool.turn} ran again after it was recorded`,
              ).toBeUndefined();
            }
          }
        }
        // Every provider turn was answered once in the end, and each tool call ran at most twice
        // (a second time only when a kill landed inside it, as a safe class allows).
        const calls = new Map<string, number>();
        for (const l of mine.filter((x) => x.what !== "model"))
          calls.set(`${l.what}:${l.turn}`, (calls.get(`${l.what}:${l.turn}`) ?? 0) + 1);
        expect(calls.size).toBe(2 * (TURNS - 1));
        for (const [call, n] of calls) expect(n, `${call} of run ${runId}`).toBeLessThanOrEqual(2);
        const outbox = await q<{ key: string }>(
          "select key from {s}.journal_outbox where run_id = $1 order by key",
          [runId],
        );
        expect(outbox.map((o) => o.key).sort()).toEqual(
          Array.from({ length: TURNS - 1 }, (_, i) => `note-${i + 1}`).sort(),
        );
        expect(transcript(await runtime.session(runId))).toEqual(uninterrupted);
      }
      const paid = log.filter((l) => l.what === "model" && runIds.includes(l.run_id)).length;
      // Ten turns per run, plus at most the one call in flight at each kill.
      expect(paid).toBeGreaterThanOrEqual(TURNS * runIds.length);
      expect(paid).toBeLessThanOrEqual(TURNS * runIds.length + KILLS);
      await expectNoReview(store, runIds);
    }, 300_000);

    it("kill -9 between dispatch and record of a non_idempotent call parks the run in needs_review, never re-sent on its own", async () => {
      const { runtime, workerUrl, q, schema } = await setUp(POSTGRES_URL!);
      const spawn = (hang: boolean) =>
        spawnJournalWorker({
          url: workerUrl,
          schema,
          workerId: "sender",
          leaseMs: LEASE_MS,
          mode: "send-non_idempotent",
          hang,
        }).then(track);
      const first = await spawn(true);
      const planHash = await first.ready;
      const run = await runtime.submit(planHash, Session.fromUserMessage("send it"));
      await nextNote(first, (n) => n.runId === run.id && n.what === "send");
      await first.kill();
      const second = await spawn(false);
      await second.ready;
      const parked = await runtime.wait(run.id, { onPark: "return", signal: AbortSignal.timeout(30_000) });
      expect(parked.status).toBe("needs_review");
      // Two more lease lengths on a live worker: still parked, still sent once.
      await new Promise((r) => setTimeout(r, 2 * LEASE_MS));
      expect((await runtime.get(run.id))?.status).toBe("needs_review");
      expect(await q("select pid from {s}.journal_log where what = 'send'")).toHaveLength(1);
      const [effect] = (await runtime.effects.list({ runId: run.id })).items;
      expect(effect).toMatchObject({
        tool: "send",
        status: "needs_review",
        dispatches: 1,
        arguments: { to: "ana" },
      });
      await runtime.effects.resolve(effect!.id, {
        kind: "succeeded",
        result: { sent: "ana", by: "hand" },
        actor: "ops",
      });
      const out = await runtime.result(run.id, { signal: AbortSignal.timeout(30_000) });
      expect(
        out.chunks
          .filter((c) => c.kind === "tool_result")
          .map((c) => JSON.parse((c as { content: string }).content)),
      ).toEqual([{ sent: "ana", by: "hand" }]);
      expect(await q("select pid from {s}.journal_log where what = 'send'")).toHaveLength(1);
      await second.kill();
    }, 90_000);

    it("kill -9 between dispatch and record of an idempotent keyed call retries it once and succeeds", async () => {
      const { runtime, workerUrl, q, schema } = await setUp(POSTGRES_URL!);
      const spawn = (hang: boolean) =>
        spawnJournalWorker({
          url: workerUrl,
          schema,
          workerId: "sender",
          leaseMs: LEASE_MS,
          mode: "send-idempotent",
          hang,
        }).then(track);
      const first = await spawn(true);
      const planHash = await first.ready;
      const run = await runtime.submit(planHash, Session.fromUserMessage("send it"));
      await nextNote(first, (n) => n.runId === run.id && n.what === "send");
      await first.kill();
      const second = await spawn(false);
      await second.ready;
      const out = await runtime.result(run.id, { signal: AbortSignal.timeout(30_000) });
      expect(
        out.chunks
          .filter((c) => c.kind === "tool_result")
          .map((c) => JSON.parse((c as { content: string }).content)),
      ).toEqual([{ sent: "ana", by: "sender" }]);
      expect(await q("select pid from {s}.journal_log where what = 'send'")).toHaveLength(2);
      const [effect] = (await runtime.effects.list({ runId: run.id, status: "succeeded" })).items;
      expect(effect).toMatchObject({ idempotencyKey: "send-ana", dispatches: 2 });
      await second.kill();
    }, 90_000);
  });
} else {
  describe.skip(`the journal under kill -9 (${postgres.reason})`, () => {
    it("needs the PostgreSQL test server", () => {});
  });
}

async function expectNoReview(store: RunStoreV1, runIds: readonly string[]) {
  for (const runId of runIds) {
    const events = await store.readEvents(runId, { limit: 10_000 });
    expect(
      events.some((e) => e.type === "run.effect.review"),
      `run ${runId} went under review`,
    ).toBe(false);
  }
}
