import { randomBytes } from "node:crypto";
import { PGlite } from "@electric-sql/pglite";
import { Session } from "@openrath/core";
import { compilePlan, defineWorkflow } from "@openrath/runtime-durable";
import {
  type AuditInput,
  encodeCheckpoint,
  type JournalStoreV1,
  type RunStoreV1,
  type SubmitInput,
} from "@openrath/runtime-durable/store";
import pg from "pg";
import { afterAll, describe, expect, it } from "vitest";
import { pgliteStore, postgresStore } from "./postgres-store.js";
import { POSTGRES_URL, postgres } from "./testing/postgres-url.js";

/**
 * A failure injected after every statement of a change: a deferred trigger on `audit` fires at
 * COMMIT for a record whose reason is `inject:<how>`, and raises (`raise`) or ends its own
 * connection (`terminate`, PostgreSQL only), so the transaction dies between its last statement
 * and its commit.
 */
const INJECTOR = (schema: string) => `
create function ${schema}.inject_failure() returns trigger language plpgsql as $$
begin
  if new.reason = 'inject:terminate' then
    perform pg_terminate_backend(pg_backend_pid());
    perform pg_sleep(5);
  end if;
  raise exception 'injected failure at commit' using errcode = 'P0001';
end $$;
create constraint trigger inject_failure after insert on ${schema}.audit deferrable initially deferred
  for each row when (new.reason like 'inject:%') execute function ${schema}.inject_failure();`;

type How = "raise" | "terminate";

const audit = (action: string, kind: string, reason: string | null = null): AuditInput => ({
  tenantId: "tenant-a",
  actor: "token:ana",
  action,
  outcome: "allowed",
  resourceKind: kind,
  reason,
});

let plans = 0;

/** A one-step plan, registered. */
async function plan(store: RunStoreV1) {
  const compiled = compilePlan(defineWorkflow(`atomic-${++plans}`).step("only", (s) => s, { entry: true }));
  await store.registerPlan(compiled.record);
  return compiled;
}

function input(
  planHash: string,
  entry: string,
  session: Session,
  extra: Partial<SubmitInput> = {},
): SubmitInput {
  return {
    tenantId: "tenant-a",
    planHash,
    checkpoint: encodeCheckpoint(session, null, { sequence: 0, stepId: null, nextStep: entry }).write,
    fingerprint: `fp-${session.id}`,
    ...extra,
  };
}

/** What a refused change must leave as it was: the run row and its events. */
async function runState(store: RunStoreV1, runId: string) {
  return { run: await store.getRun(runId), events: (await store.readEvents(runId)).length };
}

/** The tenant's audit records, as (action, resource) pairs. */
async function records(store: RunStoreV1) {
  const page = await store.access!.listAudit({ tenantId: "tenant-a", limit: 500 });
  return page.items.map((r) => [r.action, r.resourceId]);
}

/** A parked run: claimed, then parked `needs_review`. */
async function parkedRun(store: RunStoreV1) {
  const p = await plan(store);
  const { run } = await store.submit(input(p.hash, p.entry, Session.fromUserMessage("park")));
  const [claim] = await store.claim({ workerId: "w", planHashes: [p.hash], leaseMs: 30_000 });
  await store.park(claim!.fence, { status: "needs_review", reason: "look" });
  return run.id;
}

/** An effect under review: begun, its lease lost, put under review by the next claim. */
async function effectUnderReview(store: RunStoreV1, journal: JournalStoreV1) {
  const p = await plan(store);
  await store.submit(input(p.hash, p.entry, Session.fromUserMessage("effect")));
  const [first] = await store.claim({ workerId: "w", planHashes: [p.hash], leaseMs: 100 });
  const { effect } = await journal.beginEffect(first!.fence, {
    checkpointSeq: 0,
    stepId: "only",
    position: "t/0",
    tool: "send_mail",
    callId: "c-1",
    effect: "non_idempotent",
    idempotencyKey: null,
    argumentsDigest: "d-1",
    arguments: { to: "ana@example.com" },
  });
  await new Promise((r) => setTimeout(r, 250));
  await store.sweep();
  const [second] = await store.claim({ workerId: "w2", planHashes: [p.hash], leaseMs: 30_000 });
  await journal.reviewEffect(second!.fence, effect.id);
  return { effectId: effect.id, runId: first!.run.id };
}

/**
 * Each audited change, failed after its statements (`how`), leaves neither the change nor its
 * record; the same change without the failure then commits with exactly one record.
 */
async function failEveryChange(store: RunStoreV1, how: How): Promise<void> {
  const journal = store.journal!;
  const access = store.access!;
  const inject = (action: string, kind: string) => audit(action, kind, `inject:${how}`);
  const expected: unknown[][] = [];

  // Submissions, on each path: no run, no checkpoint, no head, no hook call.
  const p = await plan(store);
  const paths = {
    submit: (i: SubmitInput, hooks: { onCommitted: () => void }) => store.submit(i, hooks),
    claimOnSubmit: (i: SubmitInput, hooks: { onCommitted: () => void }) =>
      store.claimOnSubmit!.submit(i, { workerId: "w", leaseMs: 30_000 }, hooks),
    submitIfNew: (i: SubmitInput, hooks: { onCommitted: () => void }) =>
      store.newSessionSubmit!.submitIfNew(i, [i.checkpoint.sessionId], hooks),
  };
  for (const [name, submitVia] of Object.entries(paths)) {
    const session = Session.fromUserMessage(`${name} ${how}`);
    let committed = 0;
    const hooks = { onCommitted: () => void committed++ };
    await expect(
      submitVia(input(p.hash, p.entry, session, { audit: inject("run.create", "run") }), hooks),
      name,
    ).rejects.toThrow();
    expect(await store.findSessionHead("tenant-a", [session.id]), name).toBeUndefined();
    expect(
      (await store.listRuns({ tenantId: "tenant-a" })).filter((r) => r.sessionId === session.id),
      name,
    ).toEqual([]);
    expect(committed, name).toBe(0);
    const done = await submitVia(
      input(p.hash, p.entry, session, { audit: audit("run.create", "run") }),
      hooks,
    );
    expect(done?.created, name).toBe(true);
    expected.push(["run.create", done!.run.id]);
    await store.cancel(done!.run.id);
  }

  // Cancel.
  const { run } = await store.submit(input(p.hash, p.entry, Session.fromUserMessage(`cancel ${how}`)));
  const before = await runState(store, run.id);
  await expect(store.cancel(run.id, { audit: inject("run.cancel", "run") })).rejects.toThrow();
  expect(await runState(store, run.id)).toEqual(before);
  await store.cancel(run.id, { audit: audit("run.cancel", "run") });
  expected.push(["run.cancel", run.id]);

  // Unpark.
  const parked = await parkedRun(store);
  const parkedBefore = await runState(store, parked);
  await expect(
    store.unpark(parked, { actor: "ana", reason: "go", audit: inject("run.unpark", "run") }),
  ).rejects.toThrow();
  expect(await runState(store, parked)).toEqual(parkedBefore);
  await store.unpark(parked, { actor: "ana", reason: "go", audit: audit("run.unpark", "run") });
  expected.push(["run.unpark", parked]);
  await store.cancel(parked);

  // An interrupt's decision.
  const q = await plan(store);
  await store.submit(input(q.hash, q.entry, Session.fromUserMessage(`decide ${how}`)));
  const [claim] = await store.claim({ workerId: "w", planHashes: [q.hash], leaseMs: 30_000 });
  const { interrupt } = await journal.raiseInterrupt(claim!.fence, {
    checkpointSeq: 0,
    stepId: "only",
    position: "i/0",
    fingerprint: "fp-i",
    kind: "approval",
    request: { question: "ok?" },
    schema: null,
    timeoutMs: null,
    onTimeout: null,
  });
  const waiting = await runState(store, claim!.run.id);
  const decision = { kind: "approve", actor: "ana" } as const;
  await expect(
    journal.decideInterrupt(interrupt.id, decision, "tenant-a", {
      audit: inject("interrupt.decide", "interrupt"),
    }),
  ).rejects.toThrow();
  expect(await runState(store, claim!.run.id)).toEqual(waiting);
  expect((await journal.getInterrupt(interrupt.id))!.status).toBe("pending");
  await journal.decideInterrupt(interrupt.id, decision, "tenant-a", {
    audit: audit("interrupt.decide", "interrupt"),
  });
  expected.push(["interrupt.decide", interrupt.id]);
  await store.cancel(claim!.run.id);

  // An effect's resolution.
  const { effectId, runId } = await effectUnderReview(store, journal);
  const reviewing = await runState(store, runId);
  const resolution = { kind: "failed", reason: "not sent", actor: "ana" } as const;
  await expect(
    journal.resolveEffect(effectId, resolution, "tenant-a", { audit: inject("effect.resolve", "effect") }),
  ).rejects.toThrow();
  expect(await runState(store, runId)).toEqual(reviewing);
  expect((await journal.getEffect(effectId))!.status).toBe("needs_review");
  await journal.resolveEffect(effectId, resolution, "tenant-a", { audit: audit("effect.resolve", "effect") });
  expected.push(["effect.resolve", effectId]);
  await store.cancel(runId);

  // A token's creation and revocation.
  const token = (hash: string, a: AuditInput) => ({
    tenantId: "tenant-a",
    name: "ci",
    grants: ["run.read"],
    secretHash: hash,
    audit: a,
  });
  const hash = randomBytes(32).toString("hex");
  await expect(access.createToken(token(hash, inject("token.create", "token")))).rejects.toThrow();
  expect(await access.findToken(hash)).toBeUndefined();
  const created = await access.createToken(token(hash, audit("token.create", "token")));
  expected.push(["token.create", created.id]);
  await expect(access.revokeToken("tenant-a", created.id, inject("token.revoke", "token"))).rejects.toThrow();
  expect((await access.findToken(hash))!.revokedAt).toBeNull();
  await access.revokeToken("tenant-a", created.id, audit("token.revoke", "token"));
  expected.push(["token.revoke", created.id]);

  expect(await records(store)).toEqual(expected);
}

const title = (how: How) =>
  `every audited change (submit on each path, cancel, unpark, a decision, a resolution, a token's creation and revocation) that fails after its statements (${how === "raise" ? "an error at commit" : "its connection closed at commit"}) leaves neither the change nor its audit record`;

describe("an audit record and its change commit together or not at all", () => {
  const pglite = PGlite.create();
  afterAll(async () => (await pglite).close());

  it(`PGlite: ${title("raise")}`, async () => {
    const db = await pglite;
    const store = await pgliteStore({ db, schema: "atomic_audit" });
    try {
      await db.exec(INJECTOR("atomic_audit"));
      await failEveryChange(store, "raise");
    } finally {
      await store.close();
    }
  });

  describe.skipIf(!postgres.available)(`PostgreSQL (${postgres.reason})`, () => {
    for (const how of ["raise", "terminate"] as const) {
      it(title(how), async () => {
        const schema = `atomic_${randomBytes(4).toString("hex")}`;
        const store = await postgresStore({ connectionString: POSTGRES_URL, schema, migrate: true });
        const admin = new pg.Client({ connectionString: POSTGRES_URL });
        await admin.connect();
        try {
          await admin.query(INJECTOR(schema));
          await failEveryChange(store, how);
        } finally {
          await store.close();
          await admin.query(`drop schema ${schema} cascade`);
          await admin.end();
        }
      });
    }
  });
});
