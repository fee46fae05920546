import type { RunStoreV1 } from "@openrath/runtime-durable/store";
import { expect } from "vitest";
import { describeGroup } from "../internal/describe-group.js";
import { claimOne, registeredPlan, sleep, submit } from "./fixtures.js";
import type { StoreSuiteContext } from "./suite-context.js";

/** Durable retry scheduling and deadlines. */
export function schedulingSuite(context: StoreSuiteContext): void {
  describeGroup<RunStoreV1>(context, "scheduling", "store", (group) => {
    group.test(
      "a scheduled retry waits for its time (database clock), and its attempt count is stored",
      async () => {
        const store = group.track(await context.create());
        const plan = await registeredPlan(store);
        const { run } = await submit(store, plan);
        const claim = await claimOne(store, plan);
        const retried = await store.scheduleRetry(claim.fence, {
          delayMs: 600,
          error: { code: "step_failed", message: "flaky" },
        });
        expect(retried).toMatchObject({ status: "queued", attempt: 2, leaseHolder: null });
        expect(retried.notBefore).toBeGreaterThan((await store.now()) + 200);
        expect(await store.claim({ workerId: "w", planHashes: [plan.hash], leaseMs: 30_000 })).toEqual([]);
        await sleep(700);
        const again = await claimOne(store, plan, "w2");
        expect(again.run).toMatchObject({ id: run.id, attempt: 2 });
        const event = (await store.readEvents(run.id)).find((e) => e.type === "run.retry.scheduled");
        expect(event?.data).toMatchObject({ attempt: 2, delayMs: 600, error: { message: "flaky" } });
      },
    );

    group.test(
      "queued runs past their deadline are swept to timed_out; runs without one are left alone",
      async () => {
        const store = group.track(await context.create());
        const plan = await registeredPlan(store);
        const now = await store.now();
        const late = (await submit(store, plan, { deadline: now + 200 })).run;
        const fine = (await submit(store, plan, { deadline: now + 600_000 })).run;
        const none = (await submit(store, plan)).run;
        await sleep(400);
        expect((await store.sweep()).timedOut).toBe(1);
        expect(await store.getRun(late.id)).toMatchObject({
          status: "timed_out",
          error: { code: "deadline_exceeded" },
        });
        expect((await store.getRun(fine.id))!.status).toBe("queued");
        expect((await store.getRun(none.id))!.status).toBe("queued");
        expect((await store.readEvents(late.id)).at(-1)!.data).toMatchObject({
          from: "queued",
          to: "timed_out",
        });
      },
    );
  });
}
