import { Session } from "@openrath/core";
import type { RunStoreV1 } from "@openrath/runtime-durable/store";
import { expect } from "vitest";
import { describeGroup } from "../internal/describe-group.js";
import { claimOne, registeredPlan, submit } from "./fixtures.js";
import { effectInput, interruptInput, journalOf, takeOver } from "./journal-fixtures.js";
import type { StoreSuiteContext } from "./suite-context.js";

/** A run's project (a label inside its tenant, ADR 0027 decision 9) and the listings filtered by it. */
export function projectsSuite(context: StoreSuiteContext): void {
  describeGroup<RunStoreV1>(context, "projects", "store", (group) => {
    group.test(
      "a run keeps the project it was submitted under (null for none) in every record of it, and listRuns filters by it within the tenant",
      async () => {
        const store = group.track(await context.create());
        const plan = await registeredPlan(store);
        const alpha = await submit(store, plan, { projectId: "alpha" });
        const none = await submit(store, plan);
        const nulled = await submit(store, plan, { projectId: null });
        const beta = await submit(store, plan, { projectId: "beta" });
        const other = await submit(store, plan, { projectId: "alpha", tenantId: "tenant-b" });
        expect(alpha.run.projectId).toBe("alpha");
        expect(none.run.projectId).toBeNull();
        expect(nulled.run.projectId).toBeNull();
        expect((await store.getRun(alpha.run.id))!.projectId).toBe("alpha");

        const ids = async (projectId?: string, tenantId = "tenant-a") =>
          (await store.listRuns({ tenantId, ...(projectId === undefined ? {} : { projectId }) })).map(
            (r) => r.id,
          );
        expect(await ids("alpha")).toEqual([alpha.run.id]);
        expect(await ids("beta")).toEqual([beta.run.id]);
        expect(await ids("gamma")).toEqual([]);
        expect(await ids()).toEqual([alpha.run.id, none.run.id, nulled.run.id, beta.run.id]);
        expect(await ids("alpha", "tenant-b")).toEqual([other.run.id]);

        // The project rides along on every change of the run.
        const claimed = await claimOne(store, plan, "worker-a");
        expect(claimed.run).toMatchObject({ id: alpha.run.id, projectId: "alpha" });
        const cancelled = await store.cancel(beta.run.id);
        expect(cancelled.projectId).toBe("beta");
      },
    );

    group.test(
      "the project is not part of the submission's fingerprint: a resubmission under another project gets the first run",
      async () => {
        const store = group.track(await context.create());
        const plan = await registeredPlan(store);
        const session = Session.fromUserMessage("once");
        const first = await submit(store, plan, { session, idempotencyKey: "k", projectId: "alpha" });
        const again = await submit(store, plan, { session, idempotencyKey: "k", projectId: "beta" });
        expect(again).toMatchObject({ created: false, run: { id: first.run.id, projectId: "alpha" } });
      },
    );

    if (context.capabilities.journal) {
      group.test("interrupts and effects are listed by their run's project", async () => {
        const store = group.track(await context.create());
        const journal = journalOf(store);
        const plan = await registeredPlan(store);
        const raised: Record<string, string> = {};
        const effects: Record<string, string> = {};
        for (const projectId of ["alpha", "beta"]) {
          const { run } = await submit(store, plan, { projectId });
          const claim = await store.claim({ workerId: "worker-a", planHashes: [plan.hash], leaseMs: 150 });
          expect(claim.map((c) => c.run.id)).toEqual([run.id]);
          const e = await journal.beginEffect(claim[0]!.fence, effectInput());
          const fresh = await takeOver(store, claim[0]!);
          await journal.reviewEffect(fresh.fence, e.effect.id);
          effects[projectId] = e.effect.id;
          await store.unpark(run.id, { actor: "test", reason: "on with it" });
          const next = await claimOne(store, plan, "worker-c");
          raised[projectId] = (
            await journal.raiseInterrupt(next.fence, interruptInput({ position: "i/p" }))
          ).interrupt.id;
        }
        const interrupts = async (projectId: string, tenantId = "tenant-a") =>
          (await journal.listInterrupts({ tenantId, projectId })).items.map((i) => i.id);
        const reviews = async (projectId: string, tenantId = "tenant-a") =>
          (await journal.listEffects({ tenantId, projectId })).items.map((e) => e.id);
        expect(await interrupts("alpha")).toEqual([raised.alpha]);
        expect(await interrupts("beta")).toEqual([raised.beta]);
        expect(await interrupts("alpha", "tenant-b")).toEqual([]);
        expect(await reviews("alpha")).toEqual([effects.alpha]);
        expect(await reviews("beta")).toEqual([effects.beta]);
        expect(await reviews("gamma")).toEqual([]);
        expect((await journal.listEffects({ tenantId: "tenant-a" })).items).toHaveLength(2);
      });
    }
  });
}
