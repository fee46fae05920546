import { Session } from "@openrath/core";
import type { CompiledPlan } from "@openrath/runtime-durable";
import {
  encodeCheckpoint,
  type RunRecord,
  type RunStoreV1,
  restoreSession,
  type SubmitInput,
} from "@openrath/runtime-durable/store";
import { expect } from "vitest";
import { describeGroup } from "../internal/describe-group.js";
import { expectOpenRathError } from "../internal/expect-error.js";
import { claimOne, registeredPlan, submit } from "./fixtures.js";
import type { StoreSuiteContext } from "./suite-context.js";

/** A submission of `session` with checkpoint 0 encoded without a base, as for a session new to the store. */
function newSessionInput(plan: CompiledPlan, session: Session): SubmitInput {
  return {
    tenantId: "tenant-a",
    planHash: plan.hash,
    checkpoint: encodeCheckpoint(session, null, { sequence: 0, stepId: null, nextStep: plan.entry }).write,
    fingerprint: `fp-${session.id}`,
  };
}

/**
 * Plans, idempotent submission with fingerprints, one active run per session, and the fast path
 * `newSessionSubmit` beside the plain submission.
 */
export function submissionSuite(context: StoreSuiteContext): void {
  describeGroup<RunStoreV1>(context, "submission", "store", (group) => {
    group.test(
      "plans are insert-once: the same content again is a no-op, other content is plan_conflict",
      async () => {
        const store = group.track(await context.create());
        const plan = await registeredPlan(store);
        await store.registerPlan(plan.record);
        expect(await store.getPlan(plan.hash)).toEqual(plan.record);
        await expectOpenRathError(
          () => store.registerPlan({ ...plan.record, definition: { other: true } }),
          "plan_conflict",
          "registerPlan(other content)",
        );
        expect(await store.getPlan("0".repeat(64))).toBeUndefined();
      },
    );

    if (context.capabilities.newSessionSubmit) {
      group.test(
        "newSessionSubmit.submitIfNew writes a new session's run in one call, and writes nothing when the session or a lineage parent has a checkpoint",
        async () => {
          const store = group.track(await context.create());
          const fast = store.newSessionSubmit!;
          const plan = await registeredPlan(store);
          const session = Session.fromUserMessage("a new conversation");
          const input = (s: Session) => newSessionInput(plan, s);
          const first = await fast.submitIfNew(input(session), [session.id]);
          expect(first).toMatchObject({ created: true, run: { status: "queued", sessionId: session.id } });
          expect(JSON.stringify(restoreSession((await store.loadCheckpoint(first!.run.id))!).toJSON())).toBe(
            JSON.stringify(session.toJSON()),
          );
          await store.cancel(first!.run.id);
          const again = session.append({ kind: "user", content: "more" });
          expect(await fast.submitIfNew(input(again), [again.id])).toBeUndefined();
          const fork = again.fork();
          expect(await fast.submitIfNew(input(fork), [fork.id, again.id])).toBeUndefined();
          // Another tenant has no head for it.
          expect(await fast.submitIfNew({ ...input(again), tenantId: "tenant-b" }, [again.id])).toMatchObject(
            {
              created: true,
            },
          );
          expect(await store.listRuns({ tenantId: "tenant-a" })).toHaveLength(1);
        },
      );

      group.test(
        "the plain path still submits a new session on a store with newSessionSubmit, as the fast path does",
        async () => {
          const store = group.track(await context.create());
          const plan = await registeredPlan(store);
          const viaFast = Session.fromUserMessage("the same words");
          const viaPlain = Session.fromUserMessage("the same words");
          const fast = await store.newSessionSubmit!.submitIfNew(newSessionInput(plan, viaFast), [
            viaFast.id,
          ]);
          // The plain path: the session's head (none), checkpoint 0 encoded without a base, `submit`.
          expect(await store.findSessionHead("tenant-a", [viaPlain.id])).toBeUndefined();
          const plain = await store.submit(newSessionInput(plan, viaPlain));
          const shape = (r: RunRecord) => ({
            status: r.status,
            version: r.version,
            eventSeq: r.eventSeq,
            checkpointSeq: r.checkpointSeq,
            nextStep: r.nextStep,
            attempt: r.attempt,
          });
          expect(plain.created).toBe(true);
          expect(shape(plain.run)).toEqual(shape(fast!.run));
          for (const [result, session] of [
            [fast!, viaFast],
            [plain, viaPlain],
          ] as const) {
            expect(restoreSession((await store.loadCheckpoint(result.run.id))!).toJSON()).toEqual(
              session.toJSON(),
            );
            expect((await store.readEvents(result.run.id)).map((e) => e.type)).toEqual(["run.created"]);
          }
        },
      );
    } else
      group.skip(
        "newSessionSubmit.submitIfNew writes a new session's run in one call",
        "no newSessionSubmit capability",
      );

    group.test("a run for an unknown plan hash is unknown_plan and creates nothing", async () => {
      const store = group.track(await context.create());
      const plan = await registeredPlan(store);
      const fake = { ...plan, hash: "f".repeat(64) };
      await expectOpenRathError(() => submit(store, fake), "unknown_plan", "submit(unknown plan)");
      expect(await store.listRuns({ tenantId: "tenant-a" })).toEqual([]);
    });

    group.test("a new run is queued at version 1 with checkpoint 0 and a run.created event", async () => {
      const store = group.track(await context.create());
      const plan = await registeredPlan(store);
      const { run, created, session } = await submit(store, plan, { priority: 5 });
      expect(created).toBe(true);
      expect(run).toMatchObject({
        status: "queued",
        version: 1,
        priority: 5,
        nextStep: "first",
        attempt: 1,
        checkpointSeq: 0,
        eventSeq: 1,
        fencingToken: 0,
        tenantId: "tenant-a",
        sessionId: session.id,
        planHash: plan.hash,
        workflow: plan.name,
      });
      const events = await store.readEvents(run.id);
      expect(events.map((e) => [e.seq, e.type])).toEqual([[1, "run.created"]]);
      expect(await store.getRun(run.id)).toEqual(run);
      expect(await store.getRun(run.id, "tenant-b")).toBeUndefined();
      expect(await store.getRun("not-a-run")).toBeUndefined();
    });

    group.test(
      "the same (tenant, key, fingerprint) returns the first run; another fingerprint is idempotency_conflict",
      async () => {
        const store = group.track(await context.create());
        const plan = await registeredPlan(store);
        const session = Session.fromUserMessage("once");
        const first = await submit(store, plan, { session, idempotencyKey: "k1", fingerprint: "A" });
        const again = await submit(store, plan, { session, idempotencyKey: "k1", fingerprint: "A" });
        expect(again.created).toBe(false);
        expect(again.run.id).toBe(first.run.id);
        const error = await expectOpenRathError(
          () =>
            submit(store, plan, {
              session: Session.fromUserMessage("other"),
              idempotencyKey: "k1",
              fingerprint: "B",
            }),
          "idempotency_conflict",
          "submit(same key, other fingerprint)",
        );
        expect(error.details.runId).toBe(first.run.id);
        const otherTenant = await submit(store, plan, {
          session,
          idempotencyKey: "k1",
          fingerprint: "A",
          tenantId: "tenant-b",
        });
        expect(otherTenant.created).toBe(true);
        expect(otherTenant.run.id).not.toBe(first.run.id);
      },
    );

    group.test("concurrent submissions with one key create exactly one run", async () => {
      const store = group.track(await context.create());
      const peer = context.peer ? group.track(await context.peer()) : store;
      const plan = await registeredPlan(store);
      const session = Session.fromUserMessage("race");
      const results = await Promise.all(
        Array.from({ length: 12 }, (_, i) =>
          submit(i % 2 ? peer : store, plan, { session, idempotencyKey: "race", fingerprint: "same" }),
        ),
      );
      expect(new Set(results.map((r) => r.run.id)).size).toBe(1);
      expect(results.filter((r) => r.created).length).toBe(1);
    });

    group.test("a session has one active run; a second is session_busy until the first ends", async () => {
      const store = group.track(await context.create());
      const plan = await registeredPlan(store);
      const session = Session.fromUserMessage("busy");
      const { run } = await submit(store, plan, { session });
      const error = await expectOpenRathError(
        () => submit(store, plan, { session, fingerprint: "second" }),
        "session_busy",
        "submit(busy session)",
      );
      expect(error.details.runId).toBe(run.id);
      const claim = await claimOne(store, plan);
      await store.finish(claim.fence, { status: "failed", error: { code: "step_failed", message: "boom" } });
      const next = await submit(store, plan, { session, fingerprint: "third" });
      expect(next.created).toBe(true);
    });

    group.test(
      "submissions made at the same time each get what they would alone: runs, session_busy, the key's run, conflicts",
      async () => {
        const store = group.track(await context.create());
        const plan = await registeredPlan(store);
        const input = (session: Session, extra: Partial<SubmitInput> = {}): SubmitInput => ({
          tenantId: "tenant-a",
          planHash: plan.hash,
          checkpoint: encodeCheckpoint(session, null, { sequence: 0, stepId: null, nextStep: plan.entry })
            .write,
          fingerprint: `fp-${session.id}`,
          ...extra,
        });
        const fresh = Array.from({ length: 4 }, (_, i) => Session.fromUserMessage(`together ${i}`));
        const shared = Session.fromUserMessage("one session twice");
        const keyed = Session.fromUserMessage("one key twice");
        const headed = (await submit(store, plan)).session;
        const newcomer = Session.fromUserMessage("new to the store");
        // All started in one turn, so a store that groups submissions groups these.
        const [plain, busy, key, conflict, unknown, ifNew] = [
          fresh.map((session) => store.submit(input(session))),
          Promise.allSettled([
            store.submit(input(shared)),
            store.submit(input(shared, { fingerprint: "other" })),
          ]),
          Promise.allSettled([
            store.submit(input(keyed, { idempotencyKey: "k" })),
            store.submit(input(keyed, { idempotencyKey: "k" })),
          ]),
          store
            .submit(
              input(Session.fromUserMessage("k again"), { idempotencyKey: "k", fingerprint: "different" }),
            )
            .catch((e: unknown) => e),
          store
            .submit(input(Session.fromUserMessage("no plan"), { planHash: "f".repeat(64) }))
            .catch((e: unknown) => e),
          store.newSessionSubmit && context.capabilities.newSessionSubmit
            ? [
                store.newSessionSubmit.submitIfNew(input(headed), [headed.id]),
                store.newSessionSubmit.submitIfNew(input(newcomer), [newcomer.id]),
              ]
            : [],
        ] as const;
        const runs = await Promise.all(plain);
        expect(runs.every((r) => r.created)).toBe(true);
        expect(new Set(runs.map((r) => r.run.id)).size).toBe(4);
        for (const [i, { run }] of runs.entries()) {
          const checkpoint = await store.loadCheckpoint(run.id, 0);
          expect(restoreSession(checkpoint!).toJSON()).toEqual(fresh[i]!.toJSON());
          expect((await store.readEvents(run.id)).map((e) => e.type)).toEqual(["run.created"]);
        }
        const [first, second] = await busy;
        expect(first).toMatchObject({ status: "fulfilled", value: { created: true } });
        expect(second).toMatchObject({ status: "rejected", reason: { code: "session_busy" } });
        // One request wins the key (submissions in flight together may commit in either order):
        // the same request again gets its run, the other request idempotency_conflict.
        const keyedRuns = await key;
        const other = await conflict;
        if (keyedRuns.every((r) => r.status === "fulfilled")) {
          const [a, b] = keyedRuns.map(
            (r) => (r as PromiseFulfilledResult<{ run: RunRecord; created: boolean }>).value,
          );
          expect(a!.run.id).toBe(b!.run.id);
          expect([a!.created, b!.created].filter(Boolean)).toHaveLength(1);
          expect(other).toMatchObject({ code: "idempotency_conflict" });
        } else {
          expect(other).toMatchObject({
            created: true,
            run: { idempotencyKey: "k", fingerprint: "different" },
          });
          for (const r of keyedRuns)
            expect(r).toMatchObject({ status: "rejected", reason: { code: "idempotency_conflict" } });
        }
        expect(await unknown).toMatchObject({ code: "unknown_plan" });
        if (context.capabilities.newSessionSubmit) {
          const [none, made] = await Promise.all(ifNew);
          expect(none).toBeUndefined();
          expect(made).toMatchObject({ created: true, run: { sessionId: newcomer.id } });
        }
      },
    );

    group.test(
      "listRuns pages by id within the tenant, oldest or newest first, and filters by status and session",
      async () => {
        const store = group.track(await context.create());
        const plan = await registeredPlan(store);
        const runs = [];
        for (let i = 0; i < 5; i++) runs.push((await submit(store, plan)).run);
        await submit(store, plan, { tenantId: "tenant-b" });
        const page1 = await store.listRuns({ tenantId: "tenant-a", limit: 3 });
        const page2 = await store.listRuns({ tenantId: "tenant-a", limit: 3, after: page1.at(-1)!.id });
        expect([...page1, ...page2].map((r) => r.id)).toEqual(runs.map((r) => r.id));
        // Newest first: a run created between two pages is not on the second, nor is any run twice.
        const newest = await store.listRuns({ tenantId: "tenant-a", order: "desc", limit: 3 });
        const meanwhile = (await submit(store, plan)).run;
        const older = await store.listRuns({
          tenantId: "tenant-a",
          order: "desc",
          limit: 3,
          after: newest.at(-1)!.id,
        });
        expect([...newest, ...older].map((r) => r.id)).toEqual(runs.map((r) => r.id).reverse());
        expect((await store.listRuns({ tenantId: "tenant-a", order: "desc", limit: 1 }))[0]!.id).toBe(
          meanwhile.id,
        );
        expect(await store.listRuns({ tenantId: "tenant-a", status: "running" })).toEqual([]);
        expect(
          (await store.listRuns({ tenantId: "tenant-a", sessionId: runs[2]!.sessionId })).map((r) => r.id),
        ).toEqual([runs[2]!.id]);
      },
    );
  });
}
