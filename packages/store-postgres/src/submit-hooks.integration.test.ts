import { randomBytes } from "node:crypto";
import { Session } from "@openrath/core";
import { compilePlan, defineWorkflow } from "@openrath/runtime-durable";
import { encodeCheckpoint, type RunRecord, type SubmitInput } from "@openrath/runtime-durable/store";
import pg from "pg";
import { describe, expect, it } from "vitest";
import { postgresStore } from "./postgres-store.js";
import { POSTGRES_URL, postgres } from "./testing/postgres-url.js";

// `commit_delay` can be set only by a superuser: the test services connect as one.
/** PostgreSQL's longest `commit_delay` (µs): with `commit_siblings = 0`, every flushing commit sleeps this long. */
const FLUSH_DELAY_US = 100_000;

/** `POSTGRES_URL` whose sessions flush the WAL slowly (a slow disk, at the server). */
function slowFlushUrl(): string {
  const url = new URL(POSTGRES_URL!);
  url.searchParams.set("options", `-c commit_delay=${FLUSH_DELAY_US} -c commit_siblings=0`);
  return url.toString();
}

async function openStore(schema: string, options: { slowFlush?: boolean; strict?: boolean } = {}) {
  await (await postgresStore({ connectionString: POSTGRES_URL!, schema, migrate: true })).close();
  const store = await postgresStore({
    connectionString: options.slowFlush ? slowFlushUrl() : POSTGRES_URL!,
    schema,
    ...(options.strict ? { stepDurability: "strict" as const } : {}),
  });
  const plan = compilePlan(defineWorkflow(`hooks-${schema}`).step("a", (s) => s, { entry: true }));
  await store.registerPlan(plan.record);
  const input = (session: Session, idempotencyKey?: string): SubmitInput => ({
    tenantId: "tenant-a",
    planHash: plan.hash,
    checkpoint: encodeCheckpoint(session, null, { sequence: 0, stepId: null, nextStep: plan.entry }).write,
    fingerprint: `fp-${session.id}`,
    ...(idempotencyKey === undefined ? {} : { idempotencyKey }),
  });
  return { store, input };
}

/** Submits, recording when `onCommitted` came (and what another connection saw then) and when the call answered. */
async function observedSubmit(
  observer: pg.Client,
  schema: string,
  write: (hooks: { onCommitted: (run: RunRecord) => void }) => Promise<{ run: RunRecord } | undefined>,
) {
  const reported: { run: RunRecord; at: number; answered: boolean; seen: Promise<string | undefined> }[] = [];
  let answered = false;
  const startedAt = performance.now();
  const result = await write({
    onCommitted: (run) =>
      reported.push({
        run,
        at: performance.now(),
        answered,
        seen: observer
          .query<{ status: string }>(`select status from "${schema}".runs where id = $1`, [run.id])
          .then((r) => r.rows[0]?.status),
      }),
  });
  answered = true;
  return { result, reported, startedAt, answeredAt: performance.now() };
}

describe.skipIf(!postgres.available)(`SubmitHooks.onCommitted on PostgreSQL (${postgres.reason})`, () => {
  for (const strict of [false, true]) {
    it(`reports a new run once, committed and visible, before the call answers (${strict ? "strict" : "relaxed"})`, async () => {
      const schema = `hooks_${randomBytes(5).toString("hex")}`;
      const { store, input } = await openStore(schema, { strict });
      const observer = new pg.Client({ connectionString: POSTGRES_URL });
      await observer.connect();
      try {
        const session = Session.fromUserMessage("first");
        const viaIfNew = await observedSubmit(observer, schema, (hooks) =>
          store.newSessionSubmit!.submitIfNew(input(session, "key-1"), [session.id], hooks),
        );
        expect(viaIfNew.reported).toHaveLength(1);
        expect(viaIfNew.reported[0]!.run).toEqual(viaIfNew.result!.run);
        expect(viaIfNew.reported[0]!.answered).toBe(false);
        expect(await viaIfNew.reported[0]!.seen, "another connection sees the queued run").toBe("queued");

        const again = Session.fromUserMessage("second");
        const viaSubmit = await observedSubmit(observer, schema, (hooks) =>
          store.submit(input(again), hooks),
        );
        expect(viaSubmit.reported.map((r) => r.run.id)).toEqual([viaSubmit.result!.run.id]);
        expect(await viaSubmit.reported[0]!.seen).toBe("queued");

        // No new run, no report: the same key answers with the first run; a session with a head.
        const replay = await observedSubmit(observer, schema, (hooks) =>
          store.submit(input(session, "key-1"), hooks),
        );
        expect(replay.result!.run.id).toBe(viaIfNew.result!.run.id);
        expect(replay.reported).toHaveLength(0);
        const headed = await observedSubmit(observer, schema, (hooks) =>
          store.newSessionSubmit!.submitIfNew(input(session), [session.id], hooks),
        );
        expect(headed.result).toBeUndefined();
        expect(headed.reported).toHaveLength(0);

        // A hook that throws does not fail the submission.
        const third = Session.fromUserMessage("third");
        const thrown = await store.submit(input(third), {
          onCommitted: () => {
            throw new Error("the hook broke");
          },
        });
        expect(thrown.created).toBe(true);
      } finally {
        await observer.end();
        await store.close();
      }
    }, 30_000);
  }

  it("answers a relaxed submission only after a WAL flush, and reports the run before that flush", async () => {
    const schema = `hooks_${randomBytes(5).toString("hex")}`;
    const { store, input } = await openStore(schema, { slowFlush: true });
    const observer = new pg.Client({ connectionString: POSTGRES_URL });
    await observer.connect();
    try {
      const floor = FLUSH_DELAY_US / 1000 - 10;
      for (let i = 0; i < 3; i++) {
        const session = Session.fromUserMessage(`slow ${i}`);
        const { reported, startedAt, answeredAt } = await observedSubmit(observer, schema, (hooks) =>
          store.submit(input(session), hooks),
        );
        // The flush this server makes slow is waited for: the caller learns of the run once it is durable.
        expect(answeredAt - startedAt).toBeGreaterThan(floor);
        // The run was reported (and visible) before that flush, not after it.
        expect(answeredAt - reported[0]!.at).toBeGreaterThan(floor);
        expect(await reported[0]!.seen).toBe("queued");
      }
    } finally {
      await observer.end();
      await store.close();
    }
  }, 30_000);
});
