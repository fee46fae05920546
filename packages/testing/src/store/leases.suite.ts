import { encodeCheckpoint, type RunStoreV1 } from "@openrath/runtime-durable/store";
import { expect, vi } from "vitest";
import { describeGroup } from "../internal/describe-group.js";
import { expectOpenRathError } from "../internal/expect-error.js";
import { baseOfRun, claimOne, registeredPlan, sleep, submit } from "./fixtures.js";
import type { StoreSuiteContext } from "./suite-context.js";

/** Leases judged by the database clock, heartbeats, reclaim, and fencing of every worker write. */
export function leasesSuite(context: StoreSuiteContext): void {
  describeGroup<RunStoreV1>(context, "leases and fencing", "store", (group) => {
    group.test(
      "a stale fencing token is rejected on every write after another worker takes over",
      async () => {
        const store = group.track(await context.create());
        const plan = await registeredPlan(store);
        const { run } = await submit(store, plan);
        const stale = await claimOne(store, plan, "worker-a", 200);
        await sleep(400);
        const swept = await store.sweep();
        expect(swept.requeued).toBeGreaterThanOrEqual(1);
        const fresh = await claimOne(store, plan, "worker-b");
        // Tokens only grow (a store may skip values, e.g. tokens from the database clock).
        expect(fresh.fence.token).toBeGreaterThan(stale.fence.token);
        const { base, session, sequence } = await baseOfRun(store, run.id);
        const { write } = encodeCheckpoint(session.append({ kind: "assistant", content: "late" }), base, {
          sequence: sequence + 1,
          stepId: "first",
          nextStep: "second",
        });
        const before = await store.getRun(run.id);
        for (const [what, attempt] of [
          ["commitStep", () => store.commitStep(stale.fence, write)],
          ["finish", () => store.finish(stale.fence, { status: "succeeded" })],
          [
            "scheduleRetry",
            () => store.scheduleRetry(stale.fence, { delayMs: 0, error: { code: "x", message: "x" } }),
          ],
          ["release", () => store.release(stale.fence)],
          ["park", () => store.park(stale.fence, { status: "waiting", reason: "x" })],
          ["appendEvent", () => store.appendEvent(stale.fence, { type: "step.note" })],
        ] as const) {
          await expectOpenRathError(attempt, "stale_fence", `${what} with a stale token`);
        }
        expect(await store.getRun(run.id)).toEqual(before);
        expect((await store.loadCheckpoint(run.id))!.sequence).toBe(0);
        const beat = await store.heartbeat([stale.fence], 30_000);
        expect(beat.lost.has(run.id)).toBe(true);
        expect(beat.renewed.has(run.id)).toBe(false);
        const forged = { ...fresh.fence, workerId: "worker-a" };
        await expectOpenRathError(
          () => store.appendEvent(forged, { type: "step.note" }),
          "stale_fence",
          "appendEvent with the right token but another worker",
        );
        expect(await store.commitStep(fresh.fence, write)).toMatchObject({ checkpointSeq: 1 });
      },
    );

    group.test("an expired lease is stale before anyone takes the run over", async () => {
      const store = group.track(await context.create());
      const plan = await registeredPlan(store);
      await submit(store, plan);
      const claim = await claimOne(store, plan, "worker-a", 150);
      await sleep(350);
      await expectOpenRathError(
        () => store.appendEvent(claim.fence, { type: "step.note" }),
        "stale_fence",
        "appendEvent after expiry",
      );
      const beat = await store.heartbeat([claim.fence], 30_000);
      expect(beat.lost.get(claim.run.id)?.reason).toMatch(/expired/);
    });

    group.test(
      "heartbeats renew the lease; expiry is set from the database clock, not the caller's",
      async () => {
        const store = group.track(await context.create());
        const plan = await registeredPlan(store);
        await submit(store, plan);
        // A worker whose clock is an hour ahead must not get a lease an hour longer (or shorter). An
        // embedded database runs on this process's clock, so the skew only applies to a server.
        if (context.capabilities.multiProcess)
          vi.useFakeTimers({ toFake: ["Date"], now: Date.now() + 3_600_000 });
        let claim: Awaited<ReturnType<typeof claimOne>>;
        let dbNow: number;
        try {
          claim = await claimOne(store, plan, "skewed", 2_000);
          dbNow = await store.now();
        } finally {
          vi.useRealTimers();
        }
        expect(Math.abs(claim.leaseExpiresAt - (dbNow + 2_000))).toBeLessThan(1_500);
        await sleep(600);
        const beat = await store.heartbeat([claim.fence], 2_000);
        const renewed = beat.renewed.get(claim.run.id)!;
        expect(renewed).toBeGreaterThan(claim.leaseExpiresAt);
        await sleep(1_600);
        expect((await store.sweep()).requeued).toBe(0);
        expect((await store.getRun(claim.run.id))!.status).toBe("running");
      },
    );

    group.test(
      "a worker restarted under the same identity takes its runs back at once with new tokens",
      async () => {
        const store = group.track(await context.create());
        const plan = await registeredPlan(store);
        await submit(store, plan);
        await submit(store, plan);
        const other = await registeredPlan(store);
        await submit(store, other);
        const first = await store.claim({
          workerId: "same-id",
          planHashes: [plan.hash, other.hash],
          leaseMs: 60_000,
          limit: 10,
        });
        expect(first.length).toBe(3);
        const back = await store.reclaim({ workerId: "same-id", planHashes: [plan.hash], leaseMs: 60_000 });
        expect(back.map((c) => c.run.id).sort()).toEqual(
          first
            .filter((c) => c.run.planHash === plan.hash)
            .map((c) => c.run.id)
            .sort(),
        );
        for (const claim of back) {
          const old = first.find((c) => c.run.id === claim.run.id)!;
          expect(claim.fence.token).toBeGreaterThan(old.fence.token);
          await expectOpenRathError(
            () => store.appendEvent(old.fence, { type: "step.note" }),
            "stale_fence",
            "the previous incarnation's write",
          );
        }
        expect(
          await store.reclaim({ workerId: "someone-else", planHashes: [plan.hash], leaseMs: 60_000 }),
        ).toEqual([]);
      },
    );
  });
}
