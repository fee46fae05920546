import { randomBytes } from "node:crypto";
import { PGlite } from "@electric-sql/pglite";
import { Session } from "@openrath/core";
import { createDurableRuntime, defineWorkflow } from "@openrath/runtime-durable";
import type { RunStoreV1 } from "@openrath/runtime-durable/store";
import pg from "pg";
import { afterAll, describe, expect, it } from "vitest";
import { pgliteStore, postgresStore } from "./postgres-store.js";
import { POSTGRES_URL, postgres } from "./testing/postgres-url.js";

const lite = PGlite.create();
afterAll(async () => (await lite).close());

type Raw = (text: string) => Promise<Record<string, unknown>[]>;

/** A schema at the current migrations whose one run has journal entries and an effect row. */
async function runWithLedger(store: RunStoreV1) {
  const runtime = createDurableRuntime({ store });
  const flow = defineWorkflow("ledger").step("s", (s) => s, { entry: true });
  await runtime.register(flow);
  const run = await runtime.submit("ledger", Session.fromUserMessage("go"));
  const [claim] = await store.claim({ workerId: "w", planHashes: [run.planHash], leaseMs: 60_000, limit: 1 });
  const journal = store.journal!;
  const visit = await journal.openStep(claim!.fence);
  const entry = {
    checkpointSeq: visit.checkpointSeq,
    position: "m/b/0",
    kind: "model" as const,
    fingerprint: "f",
    label: "model call 1",
    result: { content: "x" },
  };
  const { effect } = await journal.beginEffect(
    claim!.fence,
    {
      checkpointSeq: visit.checkpointSeq,
      stepId: "s",
      position: "t/b/0/0",
      tool: "send",
      callId: "c1",
      effect: "idempotent",
      idempotencyKey: "k1",
      argumentsDigest: "d",
      arguments: { to: "a" },
    },
    [entry],
  );
  return { run, claim: claim!, effect };
}

async function check(raw: Raw, schema: string, store: RunStoreV1) {
  // The foreign keys of the journal and the ledger are gone; the interrupts' stays.
  const keys = await raw(
    `select conrelid::regclass::text as t from pg_constraint where contype = 'f' and confrelid = '${schema}.runs'::regclass order by 1`,
  );
  expect(keys.map((k) => String(k.t).replace(`${schema}.`, ""))).not.toContain("journal");
  expect(keys.map((k) => String(k.t).replace(`${schema}.`, ""))).not.toContain("effects");
  const { run, effect } = await runWithLedger(store);
  const { run: other } = await runWithLedger(store);
  const count = async (table: string, id: string) =>
    Number((await raw(`select count(*) as n from ${schema}.${table} where run_id = '${id}'`))[0]!.n);
  expect(await count("journal", run.id)).toBe(1);
  expect(await count("effects", run.id)).toBe(1);
  expect((await store.journal!.getEffect(effect.id))?.status).toBe("dispatched");
  // Deleting a run (what retention does) still takes its journal and effects, and only its own.
  await raw(`delete from ${schema}.runs where id = '${run.id}'`);
  expect(await count("journal", run.id)).toBe(0);
  expect(await count("effects", run.id)).toBe(0);
  expect(await count("journal", other.id)).toBe(1);
  expect(await count("effects", other.id)).toBe(1);
  // A guarded write for a run that no longer exists writes nothing (no orphan without the key).
  const gone = await runWithLedger(store);
  await raw(`delete from ${schema}.runs where id = '${gone.run.id}'`);
  await expect(
    store.journal!.record(gone.claim.fence, [
      { checkpointSeq: 0, position: "m/b/1", kind: "model", fingerprint: "f", label: "late", result: null },
    ]),
  ).rejects.toMatchObject({ code: "run_not_found" });
  expect(await count("journal", gone.run.id)).toBe(0);
}

describe("migration 5 (journal without run checks)", () => {
  it("on PGlite: no foreign key checks on journal and effect inserts; deleting runs still removes them", async () => {
    const db = await lite;
    const schema = `m5_${randomBytes(4).toString("hex")}`;
    const store = await pgliteStore({ db, schema });
    try {
      await check(async (text) => (await db.query<Record<string, unknown>>(text)).rows, schema, store);
    } finally {
      await store.close();
    }
  });

  it.skipIf(!postgres.available)(`on PostgreSQL (${postgres.reason})`, async () => {
    const schema = `m5_${randomBytes(4).toString("hex")}`;
    const store = await postgresStore({ connectionString: POSTGRES_URL, schema, migrate: true });
    const client = new pg.Client({ connectionString: POSTGRES_URL });
    await client.connect();
    try {
      await check(async (text) => (await client.query(text)).rows, schema, store);
    } finally {
      await store.close();
      await client.query(`drop schema if exists ${schema} cascade`);
      await client.end();
    }
  });
});
