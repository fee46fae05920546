import { Session } from "@openrath/core";
import { type Claim, encodeCheckpoint, type RunStoreV1 } from "@openrath/runtime-durable/store";
import { expect } from "vitest";
import { describeGroup } from "../internal/describe-group.js";
import { expectOpenRathError } from "../internal/expect-error.js";
import { baseOfRun, claimOne, registeredPlan, sleep, submit } from "./fixtures.js";
import type { StoreSuiteContext } from "./suite-context.js";

/** Claims: exclusive among concurrent claimers, filtered by plan, ordered, capped per tenant. */
export function claimsSuite(context: StoreSuiteContext): void {
  describeGroup<RunStoreV1>(context, "claims", "store", (group) => {
    group.test("one queued run and 16 concurrent claimers: exactly one winner", async () => {
      const store = group.track(await context.create());
      const peer = context.peer ? group.track(await context.peer()) : store;
      const plan = await registeredPlan(store);
      const { run } = await submit(store, plan);
      const results = await Promise.all(
        Array.from({ length: 16 }, (_, i) =>
          (i % 2 ? peer : store).claim({
            workerId: `w${i}`,
            planHashes: [plan.hash],
            leaseMs: 30_000,
            limit: 1,
          }),
        ),
      );
      const winners = results.flat();
      expect(winners.length).toBe(1);
      expect(winners[0]!.run).toMatchObject({ id: run.id, status: "running", version: 2 });
      // Bumped from 0 (a store may issue larger tokens than 1, e.g. from the database clock).
      expect(winners[0]!.run.fencingToken).toBeGreaterThan(0);
      expect(winners[0]!.fence.token).toBe(winners[0]!.run.fencingToken);
      const events = await store.readEvents(run.id);
      expect(events.filter((e) => e.type === "run.claimed").length).toBe(1);
    });

    group.test("30 runs and 8 claimers in a loop: every run claimed exactly once", async () => {
      const store = group.track(await context.create());
      const peer = context.peer ? group.track(await context.peer()) : store;
      const plan = await registeredPlan(store);
      const ids = new Set<string>();
      for (let i = 0; i < 30; i++) ids.add((await submit(store, plan)).run.id);
      const claimed: Claim[] = [];
      await Promise.all(
        Array.from({ length: 8 }, async (_, i) => {
          for (;;) {
            const got = await (i % 2 ? peer : store).claim({
              workerId: `w${i}`,
              planHashes: [plan.hash],
              leaseMs: 30_000,
              limit: 3,
            });
            if (got.length === 0) return;
            claimed.push(...got);
          }
        }),
      );
      expect(claimed.length).toBe(30);
      expect(new Set(claimed.map((c) => c.run.id))).toEqual(ids);
    });

    group.test("a worker claims only runs of the plans it advertises", async () => {
      const store = group.track(await context.create());
      const v1 = await registeredPlan(store);
      const v2 = await registeredPlan(store);
      const { run: old } = await submit(store, v1);
      const { run: next } = await submit(store, v2);
      expect(
        await store.claim({ workerId: "new", planHashes: [v2.hash], leaseMs: 30_000, limit: 10 }),
      ).toMatchObject([{ run: { id: next.id } }]);
      expect(
        await store.claim({ workerId: "new", planHashes: [v2.hash], leaseMs: 30_000, limit: 10 }),
      ).toEqual([]);
      expect((await store.getRun(old.id))!.status).toBe("queued");
      expect(await store.claim({ workerId: "none", planHashes: [], leaseMs: 30_000 })).toEqual([]);
      expect(await store.claim({ workerId: "old", planHashes: [v1.hash], leaseMs: 30_000 })).toMatchObject([
        { run: { id: old.id } },
      ]);
    });

    group.test("claims go by priority, then age; notBefore holds a run back", async () => {
      const store = group.track(await context.create());
      const plan = await registeredPlan(store);
      const low = (await submit(store, plan, { priority: -5 })).run;
      const first = (await submit(store, plan)).run;
      await sleep(5);
      const second = (await submit(store, plan)).run;
      const high = (await submit(store, plan, { priority: 10 })).run;
      const later = (await submit(store, plan, { priority: 100, notBefore: (await store.now()) + 60_000 }))
        .run;
      const order: string[] = [];
      for (;;) {
        const got = await store.claim({ workerId: "w", planHashes: [plan.hash], leaseMs: 30_000 });
        if (got.length === 0) break;
        order.push(got[0]!.run.id);
      }
      expect(order).toEqual([high.id, first.id, second.id, low.id]);
      expect((await store.getRun(later.id))!.status).toBe("queued");
    });

    if (context.capabilities.tenantLimits) {
      group.test(
        "a tenant's running cap holds under concurrent claimers, and other tenants are not starved",
        async () => {
          const store = group.track(await context.create());
          const peer = context.peer ? group.track(await context.peer()) : store;
          const plan = await registeredPlan(store);
          await store.setTenantLimit("greedy", 2);
          for (let i = 0; i < 10; i++) await submit(store, plan, { tenantId: "greedy", priority: 50 });
          for (let i = 0; i < 3; i++) await submit(store, plan, { tenantId: "polite" });
          const results = await Promise.all(
            Array.from({ length: 8 }, (_, i) =>
              (i % 2 ? peer : store).claim({
                workerId: `w${i}`,
                planHashes: [plan.hash],
                leaseMs: 30_000,
                limit: 4,
              }),
            ),
          );
          const claims = results.flat();
          expect(claims.filter((c) => c.run.tenantId === "greedy").length).toBe(2);
          expect(claims.filter((c) => c.run.tenantId === "polite").length).toBe(3);
          const greedy = claims.find((c) => c.run.tenantId === "greedy")!;
          await store.finish(greedy.fence, { status: "succeeded" });
          const more = await store.claim({
            workerId: "w",
            planHashes: [plan.hash],
            leaseMs: 30_000,
            limit: 10,
          });
          expect(more.map((c) => c.run.tenantId)).toEqual(["greedy"]);
          await store.setTenantLimit("greedy", null);
          expect(
            (await store.claim({ workerId: "w", planHashes: [plan.hash], leaseMs: 30_000, limit: 10 }))
              .length,
          ).toBe(7);
        },
      );
    } else
      group.skip(
        "a tenant's running cap holds under concurrent claimers, and other tenants are not starved",
        "no tenantLimits capability",
      );

    if (context.capabilities.claimOnSubmit) {
      group.test(
        "the plain submit never claims on a store with claimOnSubmit: the run is queued for a claim",
        async () => {
          const store = group.track(await context.create());
          const plan = await registeredPlan(store);
          const { run } = await submit(store, plan);
          expect(run).toMatchObject({ status: "queued", leaseHolder: null, fencingToken: 0, eventSeq: 1 });
          expect((await store.readEvents(run.id)).map((e) => e.type)).toEqual(["run.created"]);
          const claim = await claimOne(store, plan, "w-plain");
          expect(claim.run).toMatchObject({ id: run.id, status: "running", leaseHolder: "w-plain" });
        },
      );

      group.test(
        "a submission with a claim starts its run leased to that worker, fenced like any claim",
        async () => {
          const store = group.track(await context.create());
          const plan = await registeredPlan(store);
          const before = await store.now();
          const { run, created, session } = await submit(store, plan, {
            claim: { workerId: "w-sub", leaseMs: 30_000 },
          });
          expect(created).toBe(true);
          expect(run).toMatchObject({
            status: "running",
            leaseHolder: "w-sub",
            eventSeq: 2,
            checkpointSeq: 0,
          });
          expect(run.fencingToken).toBeGreaterThan(0);
          expect(run.leaseExpiresAt!).toBeGreaterThanOrEqual(before + 29_000);
          const events = await store.readEvents(run.id);
          expect(events.map((e) => [e.seq, e.type])).toEqual([
            [1, "run.created"],
            [2, "run.claimed"],
          ]);
          expect(events[1]!.data).toMatchObject({ workerId: "w-sub", fencingToken: run.fencingToken });
          // Nobody else can claim it; its own fence writes, a wrong token does not.
          expect(await store.claim({ workerId: "other", planHashes: [plan.hash], leaseMs: 30_000 })).toEqual(
            [],
          );
          const fence = { runId: run.id, token: run.fencingToken, workerId: "w-sub" };
          const { base } = await baseOfRun(store, run.id);
          const { write } = encodeCheckpoint(session.append({ kind: "assistant", content: "step" }), base, {
            sequence: 1,
            stepId: "first",
            nextStep: "second",
          });
          await expectOpenRathError(
            () => store.commitStep({ ...fence, token: run.fencingToken - 1 }, write),
            "stale_fence",
            "commitStep with another token",
          );
          await expectOpenRathError(
            () => store.commitStep({ ...fence, workerId: "other" }, write),
            "stale_fence",
            "commitStep by another worker",
          );
          expect((await store.commitStep(fence, write)).checkpointSeq).toBe(1);
          expect((await store.heartbeat([fence], 30_000)).renewed.has(run.id)).toBe(true);
          expect((await store.finish(fence, { status: "succeeded" })).status).toBe("succeeded");
        },
      );

      group.test(
        "a submission with a claim is queued behind a due queued run of its plan, when not due, or when its tenant is capped",
        async () => {
          const store = group.track(await context.create());
          const plan = await registeredPlan(store);
          const other = await registeredPlan(store);
          const claim = { workerId: "w-sub", leaseMs: 30_000 };
          const ahead = await submit(store, plan, { priority: 5 });
          expect(ahead.run.status).toBe("queued");
          // As high a priority is waiting: the claim would take that one first.
          expect((await submit(store, plan, { priority: 5, claim })).run.status).toBe("queued");
          expect((await submit(store, plan, { priority: 0, claim })).run.status).toBe("queued");
          // A higher priority goes first anyway, and another plan's queue is not in the way.
          expect((await submit(store, plan, { priority: 6, claim })).run.status).toBe("running");
          expect((await submit(store, other, { claim })).run.status).toBe("running");
          // Not yet due.
          const later = await submit(store, other, { claim, notBefore: (await store.now()) + 60_000 });
          expect(later.run).toMatchObject({ status: "queued", leaseHolder: null, eventSeq: 1 });
          if (context.capabilities.tenantLimits) {
            await store.setTenantLimit("capped", 5);
            expect((await submit(store, other, { claim, tenantId: "capped" })).run.status).toBe("queued");
          }
          // What was queued is claimed in the claim's order.
          const claims = await store.claim({
            workerId: "w",
            planHashes: [plan.hash],
            leaseMs: 30_000,
            limit: 10,
          });
          expect(claims[0]!.run.id).toBe(ahead.run.id);
          expect(claims).toHaveLength(3);
        },
      );

      group.test(
        "a run claimed by its submission is taken over once its lease expires, and the old fence is stale",
        async () => {
          const store = group.track(await context.create());
          const plan = await registeredPlan(store);
          const { run } = await submit(store, plan, { claim: { workerId: "w-gone", leaseMs: 200 } });
          expect(run.status).toBe("running");
          await sleep(400);
          expect((await store.sweep()).requeued).toBeGreaterThanOrEqual(1);
          const [taken] = await store.claim({ workerId: "w-next", planHashes: [plan.hash], leaseMs: 30_000 });
          expect(taken!.run.id).toBe(run.id);
          expect(taken!.fence.token).toBeGreaterThan(run.fencingToken);
          await expectOpenRathError(
            () =>
              store.finish(
                { runId: run.id, token: run.fencingToken, workerId: "w-gone" },
                { status: "succeeded" },
              ),
            "stale_fence",
            "finish under the expired lease",
          );
          expect((await store.finish(taken!.fence, { status: "succeeded" })).status).toBe("succeeded");
        },
      );

      if (context.capabilities.newSessionSubmit) {
        group.test(
          "claimOnSubmit.submitIfNew claims a new session's run, and writes nothing for a session with a checkpoint",
          async () => {
            const store = group.track(await context.create());
            const fast = store.claimOnSubmit!;
            expect(fast.submitIfNew, "claimOnSubmit.submitIfNew beside newSessionSubmit").toBeTypeOf(
              "function",
            );
            const plan = await registeredPlan(store);
            const input = (session: Session) => ({
              tenantId: "tenant-a",
              planHash: plan.hash,
              checkpoint: encodeCheckpoint(session, null, { sequence: 0, stepId: null, nextStep: plan.entry })
                .write,
              fingerprint: `fp-${session.id}`,
            });
            const claim = { workerId: "w-new", leaseMs: 30_000 };
            const session = Session.fromUserMessage("new and claimed");
            const made = await fast.submitIfNew!(input(session), [session.id], claim);
            expect(made).toMatchObject({
              created: true,
              run: { status: "running", leaseHolder: "w-new", eventSeq: 2, sessionId: session.id },
            });
            expect((await store.readEvents(made!.run.id)).map((e) => e.type)).toEqual([
              "run.created",
              "run.claimed",
            ]);
            await store.finish(
              { runId: made!.run.id, token: made!.run.fencingToken, workerId: "w-new" },
              { status: "succeeded" },
            );
            const headed = session.append({ kind: "user", content: "again" });
            expect(await fast.submitIfNew!(input(headed), [headed.id, session.id], claim)).toBeUndefined();
            expect(await store.listRuns({ tenantId: "tenant-a" })).toHaveLength(1);
          },
        );
      }

      group.test("a malformed claim is invalid_argument and writes nothing", async () => {
        const store = group.track(await context.create());
        const plan = await registeredPlan(store);
        for (const claim of [
          { workerId: "", leaseMs: 30_000 },
          { workerId: "w", leaseMs: 0 },
          { workerId: "w", leaseMs: -5 },
          { workerId: "w", leaseMs: Number.NaN },
          { workerId: "w", leaseMs: Number.POSITIVE_INFINITY },
        ]) {
          await expectOpenRathError(
            () => submit(store, plan, { claim }),
            "invalid_argument",
            JSON.stringify(claim),
          );
        }
        expect(await store.listRuns({ tenantId: "tenant-a" })).toEqual([]);
      });

      group.test(
        "resubmitting an idempotency key with a claim returns the first run and claims nothing",
        async () => {
          const store = group.track(await context.create());
          const plan = await registeredPlan(store);
          const first = await submit(store, plan, { idempotencyKey: "k", fingerprint: "same" });
          expect(first.run.status).toBe("queued");
          const again = await submit(store, plan, {
            idempotencyKey: "k",
            fingerprint: "same",
            claim: { workerId: "w-sub", leaseMs: 30_000 },
          });
          expect(again).toMatchObject({
            created: false,
            run: { id: first.run.id, status: "queued", eventSeq: 1 },
          });
        },
      );
    } else
      group.skip(
        "a submission with a claim starts its run leased to that worker",
        "no claimOnSubmit capability",
      );
  });
}
