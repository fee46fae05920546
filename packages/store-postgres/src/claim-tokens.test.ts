import { randomBytes } from "node:crypto";
import { PGlite } from "@electric-sql/pglite";
import { Session } from "@openrath/core";
import { createDurableRuntime, defineWorkflow } from "@openrath/runtime-durable";
import type { RunStoreV1 } from "@openrath/runtime-durable/store";
import pg from "pg";
import { afterAll, describe, expect, it } from "vitest";
import { pgliteStore, postgresStore, type QueryEvent } from "./postgres-store.js";
import { POSTGRES_URL, postgres } from "./testing/postgres-url.js";

/** Raw SQL on the store's database, to play a database crash that lost the last commit. */
type Raw = (text: string, values?: unknown[]) => Promise<Record<string, unknown>[]>;

interface Target {
  readonly name: string;
  readonly skip: string | false;
  open(options?: { stepDurability?: "strict"; onQuery?: (e: QueryEvent) => void }): Promise<{
    store: RunStoreV1;
    schema: string;
    raw: Raw;
    close(): Promise<void>;
  }>;
}

const lite = PGlite.create();
afterAll(async () => (await lite).close());

const targets: Target[] = [
  {
    name: "PGlite",
    skip: false,
    async open(options = {}) {
      const db = await lite;
      const schema = `tokens_${randomBytes(4).toString("hex")}`;
      const store = await pgliteStore({ db, schema, ...options });
      return {
        store,
        schema,
        raw: async (text, values) => (await db.query<Record<string, unknown>>(text, values)).rows,
        close: () => store.close(),
      };
    },
  },
  {
    name: "PostgreSQL",
    skip: postgres.available ? false : postgres.reason,
    async open(options = {}) {
      const schema = `tokens_${randomBytes(4).toString("hex")}`;
      const store = await postgresStore({
        connectionString: POSTGRES_URL,
        schema,
        migrate: true,
        ...options,
      });
      const client = new pg.Client({ connectionString: POSTGRES_URL });
      await client.connect();
      return {
        store,
        schema,
        raw: async (text, values) => (await client.query(text, values)).rows,
        close: async () => {
          await store.close();
          await client.query(`drop schema if exists ${schema} cascade`);
          await client.end();
        },
      };
    },
  },
];

/** A registered one-step plan and one queued run of it. */
async function queuedRun(store: RunStoreV1) {
  const runtime = createDurableRuntime({ store });
  const flow = defineWorkflow("tokens").step("s", (s) => s, { entry: true });
  await runtime.register(flow);
  const run = await runtime.submit("tokens", Session.fromUserMessage("go"));
  return run;
}

async function claimOne(store: RunStoreV1, planHash: string, workerId: string, leaseMs = 60_000) {
  const claims = await store.claim({ workerId, planHashes: [planHash], leaseMs, limit: 1 });
  expect(claims).toHaveLength(1);
  return claims[0]!;
}

/**
 * Puts the run's row back as it was before its last claim, and drops that claim's event: what a
 * database crash that lost the claim's (relaxed) commit leaves behind.
 */
async function loseLastClaim(raw: Raw, schema: string, runId: string, token: number) {
  await raw(
    `update ${schema}.runs set status = 'queued', fencing_token = $2, lease_holder = null, lease_expires_at = null,
      version = version - 1, event_seq = event_seq - 1 where id = $1`,
    [runId, token],
  );
  await raw(
    `delete from ${schema}.run_events where run_id = $1 and seq = (select max(seq) from ${schema}.run_events where run_id = $1)`,
    [runId],
  );
}

for (const target of targets) {
  describe.skipIf(target.skip !== false)(
    `fencing tokens on ${target.name}${target.skip ? ` (${target.skip})` : ""}`,
    () => {
      it("grow with every claim and reclaim, stay exact JavaScript integers, and follow the database clock", async () => {
        const { store, close } = await target.open();
        try {
          const run = await queuedRun(store);
          const before = await store.now();
          const first = await claimOne(store, run.planHash, "worker-a", 100);
          expect(Number.isSafeInteger(first.fence.token)).toBe(true);
          // Microseconds of the database clock (a token is never below the clock at its claim).
          expect(first.fence.token).toBeGreaterThanOrEqual((before - 1_000) * 1000);
          expect((await store.getRun(run.id))?.fencingToken).toBe(first.fence.token);
          const [back] = await store.reclaim({
            workerId: "worker-a",
            planHashes: [run.planHash],
            leaseMs: 100,
          });
          expect(back!.fence.token).toBeGreaterThan(first.fence.token);
          await new Promise((r) => setTimeout(r, 250));
          await store.sweep();
          const second = await claimOne(store, run.planHash, "worker-b");
          expect(second.fence.token).toBeGreaterThan(back!.fence.token);
          expect(Number.isSafeInteger(second.fence.token)).toBe(true);
          // The run.claimed event carries the same token as the fence.
          const events = await store.readEvents(run.id, { after: 0 });
          const claimed = events
            .filter((e) => e.type === "run.claimed")
            .map((e) => (e.data as { fencingToken: number }).fencingToken);
          expect(claimed).toEqual([first.fence.token, second.fence.token]);
        } finally {
          await close();
        }
      });

      it("a claim after a lost claim issues a new token, so the lost lease's holder is stale", async () => {
        const { store, schema, raw, close } = await target.open();
        try {
          const run = await queuedRun(store);
          const lost = await claimOne(store, run.planHash, "same-worker");
          await loseLastClaim(raw, schema, run.id, 0);
          expect((await store.getRun(run.id))?.status).toBe("queued");
          const again = await claimOne(store, run.planHash, "same-worker");
          expect(again.fence.workerId).toBe(lost.fence.workerId);
          expect(again.fence.token).not.toBe(lost.fence.token);
          expect(again.fence.token).toBeGreaterThan(lost.fence.token);
          // The attempt that still holds the lost lease (same worker identity) writes nothing.
          await expect(store.appendEvent(lost.fence, { type: "step.note" })).rejects.toMatchObject({
            code: "stale_fence",
          });
          await store.appendEvent(again.fence, { type: "step.note" });
        } finally {
          await close();
        }
      });
    },
  );
}

describe.skipIf(!postgres.available)(`claim durability on PostgreSQL (${postgres.reason})`, () => {
  async function claimStatements(stepDurability?: "strict") {
    const sent: QueryEvent[] = [];
    const { store, close } = await targets[1]!.open({
      ...(stepDurability ? { stepDurability } : {}),
      onQuery: (event) => sent.push(event),
    });
    try {
      const run = await queuedRun(store);
      sent.length = 0;
      const claim = await claimOne(store, run.planHash, "worker-a");
      await store.reclaim({ workerId: "worker-a", planHashes: [run.planHash], leaseMs: 60_000 });
      expect((await store.getRun(run.id))?.fencingToken).toBeGreaterThan(claim.fence.token);
      return sent.filter((e) => /fencing_token = greatest\(/.test(e.sql));
    } finally {
      await close();
    }
  }

  it("claims and reclaims commit relaxed by default", async () => {
    const statements = await claimStatements();
    expect(statements).toHaveLength(2);
    for (const s of statements) expect(s.sql).toMatch(/set_config\('synchronous_commit', 'off', true\)/);
  });

  it("stay strict under stepDurability: strict", async () => {
    const statements = await claimStatements("strict");
    expect(statements).toHaveLength(2);
    for (const s of statements) expect(s.sql).not.toMatch(/synchronous_commit/);
  });
});

describe("a worker given a new lease on a run it still runs", () => {
  it("stops the attempt under the old lease, runs the new one, and the old one commits nothing", async () => {
    const { store, schema, raw, close } = await targets[0]!.open();
    const runtime = createDurableRuntime({ store });
    try {
      let release!: () => void;
      const gate = new Promise<void>((r) => (release = r));
      const attempts: { signal: AbortSignal; runId: string }[] = [];
      const firstRun: string[] = [];
      let started!: () => void;
      const firstStarted = new Promise<void>((r) => (started = r));
      const flow = defineWorkflow("twice").step(
        "s",
        async (s, ctx) => {
          if (firstRun.length === 0) firstRun.push(ctx.runId);
          if (ctx.runId !== firstRun[0]) return s.append({ kind: "assistant", content: "other" });
          attempts.push({ signal: ctx.signal, runId: ctx.runId });
          const n = attempts.length;
          if (n === 1) {
            started();
            await gate;
          }
          return s.append({ kind: "assistant", content: `attempt ${n}` });
        },
        { entry: true },
      );
      await runtime.register(flow);
      const worker = runtime.worker({ concurrency: 2, leaseMs: 30_000 });
      await worker.start();
      const run = await runtime.submit("twice", Session.fromUserMessage("go"));
      await firstStarted;
      // A database crash lost the claim: the row is queued again under the token before it.
      await loseLastClaim(raw, schema, run.id, 0);
      // Any work signal makes the worker claim; it claims the oldest queued run, this one, again.
      const other = await runtime.submit("twice", Session.fromUserMessage("other"));
      await expect.poll(() => attempts.length, { timeout: 5_000 }).toBeGreaterThanOrEqual(2);
      expect(attempts[0]!.signal.aborted).toBe(true);
      release();
      const out = await runtime.result(run.id);
      expect(
        out.chunks
          .filter((c) => c.kind === "assistant")
          .map((c) => (c.kind === "assistant" ? c.content : "")),
      ).toEqual(["attempt 2"]);
      await runtime.result(other.id);
      const claims = (await store.readEvents(run.id)).filter((e) => e.type === "run.claimed");
      expect(claims).toHaveLength(1);
      await worker.stop();
    } finally {
      await runtime.close();
      await close().catch(() => {});
    }
  });
});
