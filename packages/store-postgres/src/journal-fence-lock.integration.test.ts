import { randomBytes } from "node:crypto";
import { Session } from "@openrath/core";
import { createDurableRuntime, defineWorkflow } from "@openrath/runtime-durable";
import pg from "pg";
import { describe, expect, it } from "vitest";
import { postgresStore } from "./postgres-store.js";
import { POSTGRES_URL, postgres } from "./testing/postgres-url.js";

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe.skipIf(!postgres.available)(`a journal write and a takeover of its run (${postgres.reason})`, () => {
  it("a requeue that comes while a fenced journal write is in flight waits for it to commit", async () => {
    const schema = `fencelock_${randomBytes(4).toString("hex")}`;
    const store = await postgresStore({ connectionString: POSTGRES_URL, schema, migrate: true });
    const blocker = new pg.Client({ connectionString: POSTGRES_URL });
    const takeover = new pg.Client({ connectionString: POSTGRES_URL });
    await blocker.connect();
    await takeover.connect();
    try {
      const runtime = createDurableRuntime({ store });
      await runtime.register(defineWorkflow("w").step("s", (s) => s, { entry: true }));
      const run = await runtime.submit("w", Session.fromUserMessage("go"));
      const [claim] = await store.claim({
        workerId: "a",
        planHashes: [run.planHash],
        leaseMs: 60_000,
        limit: 1,
      });
      const fence = claim!.fence;
      // Another transaction holds the journal position the write goes to, so the write stops after
      // its fence check (the guard has read the run row) and before its commit.
      await blocker.query("begin");
      await blocker.query(
        `insert into ${schema}.journal (run_id, checkpoint_seq, position, kind, fingerprint, label, result, fencing_token)
         values ($1, 0, 'm/b/0', 'model', 'f', 'model call 1', 'null', $2)`,
        [run.id, fence.token],
      );
      const order: string[] = [];
      const write = store
        .journal!.record(fence, [
          {
            checkpointSeq: 0,
            position: "m/b/0",
            kind: "model",
            fingerprint: "f",
            label: "model call 1",
            result: null,
          },
        ])
        .then(() => order.push("write committed"));
      // Wait until the write is blocked on the held position.
      for (let i = 0; i < 200; i++) {
        const waiting = await takeover.query(
          `select count(*)::int as n from pg_stat_activity where wait_event_type = 'Lock' and query like '%${schema}"."journal"%'`,
        );
        if (waiting.rows[0].n > 0) break;
        await sleep(10);
      }
      // The lease is taken away (what a sweep's requeue or a new claim does to the row).
      const requeue = takeover
        .query(
          `update ${schema}.runs set status = 'queued', lease_holder = null, lease_expires_at = null,
           fencing_token = fencing_token + 1, version = version + 1 where id = $1`,
          [run.id],
        )
        .then(() => order.push("run requeued"));
      await sleep(300);
      // The guard's share lock holds the requeue until the write is done.
      expect(order).toEqual([]);
      await blocker.query("rollback");
      await Promise.all([write, requeue]);
      expect(order).toEqual(["write committed", "run requeued"]);
      // And a write under the old lease after the takeover is rejected.
      await expect(
        store.journal!.record(fence, [
          {
            checkpointSeq: 0,
            position: "m/b/1",
            kind: "model",
            fingerprint: "f",
            label: "late",
            result: null,
          },
        ]),
      ).rejects.toMatchObject({ code: "stale_fence" });
    } finally {
      await blocker.end().catch(() => {});
      await takeover.query(`drop schema if exists ${schema} cascade`).catch(() => {});
      await takeover.end();
      await store.close();
    }
  });
});
