import { Session } from "@openrath/core";
import { encodeCheckpoint, type RunStoreV1 } from "@openrath/runtime-durable/store";
import { expect } from "vitest";
import { describeGroup } from "../internal/describe-group.js";
import { expectOpenRathError } from "../internal/expect-error.js";
import { accessOf, auditInput, auditLog } from "./access-fixtures.js";
import { claimOne, registeredPlan, submit } from "./fixtures.js";
import { claimedRun, effectInput, interruptInput, takeOver } from "./journal-fixtures.js";
import type { StoreSuiteContext } from "./suite-context.js";

/**
 * The mutations that take an `audit` input write it with the change and only with it
 * (`capabilities.access`, ADR 0027 decision 7): an allowed change has exactly one record, a
 * refused one none.
 */
export function auditedMutationsSuite(context: StoreSuiteContext): void {
  describeGroup<RunStoreV1>(context, "audited mutations", "store", (group) => {
    group.test(
      "a submission that creates its run writes its record (the run's id as the resource); one answered by an earlier run or refused writes none",
      async () => {
        const store = group.track(await context.create());
        const access = accessOf(store);
        const plan = await registeredPlan(store);
        const audit = () => auditInput("run.create", "run", "tenant-a", { resourceId: null });
        const session = Session.fromUserMessage("audited");
        const { run } = await submit(store, plan, { session, idempotencyKey: "k-1", audit: audit() });
        const again = await submit(store, plan, { session, idempotencyKey: "k-1", audit: audit() });
        expect(again).toMatchObject({ created: false, run: { id: run.id } });
        await expectOpenRathError(
          () => submit(store, plan, { session, idempotencyKey: "k-2", audit: audit() }),
          "session_busy",
          "a second active run of the session",
        );
        await expectOpenRathError(
          () => submit(store, plan, { idempotencyKey: "k-1", fingerprint: "other", audit: audit() }),
          "idempotency_conflict",
          "the key with another fingerprint",
        );
        const log = await auditLog(access);
        expect(log).toMatchObject([
          { action: "run.create", outcome: "allowed", resourceKind: "run", resourceId: run.id },
        ]);
        expect(log).toHaveLength(1);
      },
    );

    if (context.capabilities.claimOnSubmit || context.capabilities.newSessionSubmit) {
      group.test(
        "the fast submission paths write the record when they create the run, and none when they write nothing",
        async () => {
          const store = group.track(await context.create());
          const access = accessOf(store);
          const plan = await registeredPlan(store);
          const input = (session: Session, tenantId = "tenant-a") => ({
            tenantId,
            planHash: plan.hash,
            checkpoint: encodeCheckpoint(session, null, { sequence: 0, stepId: null, nextStep: plan.entry })
              .write,
            fingerprint: `fp-${session.id}`,
            audit: auditInput("run.create", "run", tenantId, { resourceId: null }),
          });
          const created: string[] = [];
          const claim = { workerId: "worker-a", leaseMs: 30_000 };
          if (store.claimOnSubmit) {
            const result = await store.claimOnSubmit.submit(input(Session.fromUserMessage("claimed")), claim);
            created.push(result.run.id);
          }
          if (store.newSessionSubmit) {
            const session = Session.fromUserMessage("new");
            const result = await store.newSessionSubmit.submitIfNew(input(session), [session.id]);
            created.push(result!.run.id);
            await store.cancel(result!.run.id);
            // The session has a head now: nothing is written, no record either.
            expect(await store.newSessionSubmit.submitIfNew(input(session), [session.id])).toBeUndefined();
            if (store.claimOnSubmit?.submitIfNew)
              expect(
                await store.claimOnSubmit.submitIfNew(input(session), [session.id], claim),
              ).toBeUndefined();
          }
          expect((await auditLog(access)).map((r) => r.resourceId)).toEqual(created);
        },
      );
    }

    group.test(
      "a cancel writes its record; a cancel of an ended run is invalid_transition and writes none",
      async () => {
        const store = group.track(await context.create());
        const access = accessOf(store);
        const plan = await registeredPlan(store);
        const { run } = await submit(store, plan);
        const cancelled = await store.cancel(run.id, {
          reason: "stop",
          audit: auditInput("run.cancel", "run"),
        });
        expect(cancelled.status).toBe("cancelled");
        await expectOpenRathError(
          () => store.cancel(run.id, { audit: auditInput("run.cancel", "run") }),
          "invalid_transition",
          "cancel(a cancelled run)",
        );
        await expectOpenRathError(
          () =>
            store.cancel("00000000-0000-7000-8000-000000000000", { audit: auditInput("run.cancel", "run") }),
          "run_not_found",
          "cancel(an unknown run)",
        );
        const log = await auditLog(access);
        expect(log).toMatchObject([{ action: "run.cancel", resourceId: run.id }]);
        expect(log).toHaveLength(1);
      },
    );

    group.test("an unpark writes its record; an unpark of a run that is not parked writes none", async () => {
      const store = group.track(await context.create());
      const access = accessOf(store);
      const plan = await registeredPlan(store);
      await submit(store, plan);
      const claim = await claimOne(store, plan);
      await store.park(claim.fence, { status: "needs_review", reason: "look" });
      const audit = () => auditInput("run.unpark", "run");
      expect(
        await store.unpark(claim.run.id, { actor: "ana", reason: "fine", audit: audit() }),
      ).toMatchObject({
        status: "queued",
      });
      await expectOpenRathError(
        () => store.unpark(claim.run.id, { actor: "ana", reason: "again", audit: audit() }),
        "invalid_transition",
        "unpark(a queued run)",
      );
      const log = await auditLog(access);
      expect(log).toMatchObject([{ action: "run.unpark", resourceId: claim.run.id }]);
      expect(log).toHaveLength(1);
    });

    if (context.capabilities.journal) {
      group.test(
        "a decision writes its record (the interrupt as the resource); a second decision, a bad one or one for another tenant writes none",
        async () => {
          const store = group.track(await context.create());
          const access = accessOf(store);
          const { claim, journal } = await claimedRun(store);
          const { interrupt } = await journal.raiseInterrupt(claim.fence, interruptInput());
          const audited = () => ({
            audit: auditInput("interrupt.decide", "interrupt", "tenant-a", { resourceId: null }),
          });
          await expectOpenRathError(
            () =>
              journal.decideInterrupt(
                interrupt.id,
                { kind: "edit", actor: "ana", payload: { amount: 5000 } },
                undefined,
                audited(),
              ),
            "invalid_decision",
            "a payload against the schema",
          );
          await expectOpenRathError(
            () =>
              journal.decideInterrupt(interrupt.id, { kind: "approve", actor: "ana" }, "tenant-b", audited()),
            "interrupt_not_found",
            "another tenant's interrupt",
          );
          await journal.decideInterrupt(
            interrupt.id,
            { kind: "approve", actor: "ana" },
            "tenant-a",
            audited(),
          );
          await expectOpenRathError(
            () =>
              journal.decideInterrupt(interrupt.id, { kind: "reject", actor: "bo" }, "tenant-a", audited()),
            "interrupt_decided",
            "a second decision",
          );
          const log = await auditLog(access);
          expect(log).toMatchObject([
            { action: "interrupt.decide", resourceKind: "interrupt", resourceId: interrupt.id },
          ]);
          expect(log).toHaveLength(1);
        },
      );

      group.test(
        "an effect's resolution writes its record; one of an effect not under review writes none",
        async () => {
          const store = group.track(await context.create());
          const access = accessOf(store);
          const { claim, journal } = await claimedRun(store, { leaseMs: 150 });
          const e = await journal.beginEffect(claim.fence, effectInput());
          const audited = () => ({
            audit: auditInput("effect.resolve", "effect", "tenant-a", { resourceId: null }),
          });
          await expectOpenRathError(
            () => journal.resolveEffect(e.effect.id, { kind: "retry", actor: "ana" }, "tenant-a", audited()),
            "effect_not_under_review",
            "an effect in flight",
          );
          const fresh = await takeOver(store, claim);
          await journal.reviewEffect(fresh.fence, e.effect.id);
          const { run } = await journal.resolveEffect(
            e.effect.id,
            { kind: "retry", actor: "ana" },
            "tenant-a",
            audited(),
          );
          expect(run.status).toBe("queued");
          const log = await auditLog(access);
          expect(log).toMatchObject([
            { action: "effect.resolve", resourceKind: "effect", resourceId: e.effect.id },
          ]);
          expect(log).toHaveLength(1);
        },
      );
    }

    group.test("a change with a malformed audit record is invalid_argument and changes nothing", async () => {
      const store = group.track(await context.create());
      const access = accessOf(store);
      const plan = await registeredPlan(store);
      const bad = auditInput("run.create", "run", "tenant-a", { outcome: "maybe" as never });
      await expectOpenRathError(() => submit(store, plan, { audit: bad }), "invalid_argument", "submit");
      expect(await store.listRuns({ tenantId: "tenant-a" })).toEqual([]);
      const { run } = await submit(store, plan);
      await expectOpenRathError(() => store.cancel(run.id, { audit: bad }), "invalid_argument", "cancel");
      expect((await store.getRun(run.id))!.status).toBe("queued");
      expect(await auditLog(access)).toEqual([]);
    });
  });
}
