import {
  type Claim,
  canTransition,
  encodeCheckpoint,
  RUN_STATUSES,
  type RunRecord,
  type RunStatus,
  type RunStoreV1,
} from "@openrath/runtime-durable/store";
import { expect } from "vitest";
import { describeGroup } from "../internal/describe-group.js";
import { expectOpenRathError } from "../internal/expect-error.js";
import { baseOfRun, claimOne, commit, registeredPlan, submit } from "./fixtures.js";
import type { StoreSuiteContext } from "./suite-context.js";

/** Brings a fresh run into `status` through the contract's own operations. */
async function runIn(store: RunStoreV1, status: RunStatus): Promise<{ run: RunRecord; claim?: Claim }> {
  const plan = await registeredPlan(store);
  const { run } = await submit(store, plan);
  if (status === "queued") return { run };
  if (status === "cancelled") return { run: await store.cancel(run.id) };
  const claim = await claimOne(store, plan);
  if (status === "running") return { run: claim.run, claim };
  if (status === "waiting" || status === "needs_review")
    return { run: await store.park(claim.fence, { status, reason: "test" }), claim };
  return {
    run: await store.finish(claim.fence, {
      status,
      ...(status === "succeeded" ? {} : { error: { code: "x", message: "x" } }),
    }),
    claim,
  };
}

/** The one transition table, version compare-and-set, and an event with every change. */
export function transitionsSuite(context: StoreSuiteContext): void {
  describeGroup<RunStoreV1>(context, "transitions", "store", (group) => {
    group.test(
      "operator changes follow the transition table from every status; terminal runs never change",
      async () => {
        const store = group.track(await context.create());
        for (const from of RUN_STATUSES) {
          const cancel = await runIn(store, from);
          if (canTransition(from, "cancelled")) {
            const after = await store.cancel(cancel.run.id, { reason: "suite" });
            expect(after.status, `cancel from ${from}`).toBe("cancelled");
            expect(after.version).toBe(cancel.run.version + 1);
            expect(after.eventSeq).toBe(cancel.run.eventSeq + 1);
            const last = (await store.readEvents(cancel.run.id)).at(-1)!;
            expect(last).toMatchObject({
              seq: after.eventSeq,
              type: "run.state.changed",
              data: { from, to: "cancelled" },
            });
          } else {
            await expectOpenRathError(
              () => store.cancel(cancel.run.id),
              "invalid_transition",
              `cancel from ${from}`,
            );
            expect(await store.getRun(cancel.run.id)).toEqual(cancel.run);
          }
          const unpark = await runIn(store, from);
          if (from === "waiting" || from === "needs_review") {
            const after = await store.unpark(unpark.run.id, { actor: "operator", reason: "resolved" });
            expect(after).toMatchObject({
              status: "queued",
              version: unpark.run.version + 1,
              leaseHolder: null,
            });
          } else {
            await expectOpenRathError(
              () => store.unpark(unpark.run.id, { actor: "operator", reason: "x" }),
              "invalid_transition",
              `unpark from ${from}`,
            );
            expect(await store.getRun(unpark.run.id)).toEqual(unpark.run);
          }
        }
        await expectOpenRathError(
          () => store.cancel("00000000-0000-7000-8000-000000000000"),
          "run_not_found",
          "cancel(unknown run)",
        );
      },
    );

    group.test(
      "worker changes need a running run: finish, park, retry and release from any other status are rejected",
      async () => {
        const store = group.track(await context.create());
        for (const from of RUN_STATUSES.filter((s) => s !== "running" && s !== "queued")) {
          const { run, claim } = await runIn(store, from);
          if (!claim) continue;
          for (const attempt of [
            () => store.finish(claim.fence, { status: "succeeded" }),
            () => store.park(claim.fence, { status: "waiting", reason: "x" }),
            () => store.scheduleRetry(claim.fence, { delayMs: 0, error: { code: "x", message: "x" } }),
            () => store.release(claim.fence),
            () => store.appendEvent(claim.fence, { type: "step.note" }),
          ]) {
            await expectOpenRathError(attempt, "stale_fence", `worker write on a ${from} run`);
          }
          expect(await store.getRun(run.id)).toEqual(run);
        }
      },
    );

    group.test("every running → X change bumps the version by one and appends its event", async () => {
      const store = group.track(await context.create());
      for (const to of [
        "succeeded",
        "failed",
        "timed_out",
        "cancelled",
        "waiting",
        "needs_review",
        "queued",
      ] as const) {
        const { run, claim } = await runIn(store, "running");
        const after =
          to === "queued"
            ? await store.release(claim!.fence)
            : to === "waiting" || to === "needs_review"
              ? await store.park(claim!.fence, { status: to, reason: "suite" })
              : await store.finish(claim!.fence, {
                  status: to,
                  ...(to === "succeeded" ? {} : { error: { code: "x", message: "why" } }),
                });
        expect(after.status).toBe(to);
        expect(after.version).toBe(run.version + 1);
        expect(after.leaseHolder).toBeNull();
        const events = await store.readEvents(run.id);
        expect(events.map((e) => e.seq)).toEqual(Array.from({ length: after.eventSeq }, (_, i) => i + 1));
        expect(events.at(-1)!.data).toMatchObject({ from: "running", to });
      }
    });

    group.test("commitStep is compare-and-set on the version and the checkpoint sequence", async () => {
      const store = group.track(await context.create());
      const { run, claim } = await runIn(store, "running");
      const { baseOfRun } = await import("./fixtures.js");
      const { encodeCheckpoint } = await import("@openrath/runtime-durable/store");
      const { base, session, sequence } = await baseOfRun(store, run.id);
      const next = session.append({ kind: "assistant", content: "step one" });
      const { write } = encodeCheckpoint(next, base, {
        sequence: sequence + 1,
        stepId: "first",
        nextStep: "second",
      });
      await expectOpenRathError(
        () => store.commitStep(claim!.fence, write, run.version - 1),
        "version_conflict",
        "commitStep(stale version)",
      );
      const skipped = encodeCheckpoint(next, base, {
        sequence: sequence + 2,
        stepId: "first",
        nextStep: "second",
      });
      await expectOpenRathError(
        () => store.commitStep(claim!.fence, skipped.write),
        "version_conflict",
        "commitStep(sequence gap)",
      );
      const committed = await store.commitStep(claim!.fence, write, run.version);
      expect(committed).toMatchObject({
        version: run.version + 1,
        checkpointSeq: 1,
        nextStep: "second",
        attempt: 1,
      });
      await expectOpenRathError(
        () => store.commitStep(claim!.fence, write),
        "version_conflict",
        "commitStep(same sequence twice)",
      );
      const again = await commit(
        store,
        claim!,
        next.append({ kind: "assistant", content: "two" }),
        null,
        "second",
      );
      expect(again.checkpointSeq).toBe(2);
    });

    group.test(
      "runs ending at the same time each end as if alone; a stale or out-of-order end is refused alone",
      async () => {
        const store = group.track(await context.create());
        const plan = await registeredPlan(store);
        const runs = [];
        for (let i = 0; i < 6; i++) runs.push((await submit(store, plan)).run);
        const claims = await store.claim({
          workerId: "w",
          planHashes: [plan.hash],
          leaseMs: 30_000,
          limit: 6,
        });
        expect(claims).toHaveLength(6);
        const [stale, gap, ...good] = claims as [Claim, Claim, ...Claim[]];
        const { base, session } = await baseOfRun(store, gap.run.id);
        const skipped = encodeCheckpoint(session.append({ kind: "assistant", content: "x" }), base, {
          sequence: 2,
          stepId: "second",
          nextStep: null,
        });
        // Every end is started in the same turn, so a store that groups them groups these.
        const outcomes = await Promise.allSettled([
          store.finish({ ...stale.fence, token: stale.fence.token + 1 }, { status: "succeeded" }),
          store.finish(gap.fence, { status: "succeeded", checkpoint: skipped.write }),
          ...good.map((claim, i) =>
            store.finish(
              claim.fence,
              i % 2 === 0
                ? { status: "succeeded" }
                : { status: "failed", error: { code: "x", message: `run ${i}` } },
            ),
          ),
        ]);
        expect(outcomes[0]).toMatchObject({ status: "rejected", reason: { code: "stale_fence" } });
        expect(outcomes[1]).toMatchObject({ status: "rejected", reason: { code: "version_conflict" } });
        for (const [i, claim] of good.entries()) {
          const outcome = outcomes[i + 2]!;
          expect(outcome.status).toBe("fulfilled");
          const ended = (outcome as PromiseFulfilledResult<RunRecord>).value;
          expect(ended).toMatchObject({
            id: claim.run.id,
            status: i % 2 === 0 ? "succeeded" : "failed",
            version: claim.run.version + 1,
            eventSeq: claim.run.eventSeq + 1,
          });
          if (i % 2 === 1) expect(ended.error).toMatchObject({ code: "x", message: `run ${i}` });
          const events = await store.readEvents(claim.run.id);
          expect(events.map((e) => e.seq)).toEqual(events.map((_, n) => n + 1));
          expect(await store.getRun(claim.run.id)).toEqual(ended);
        }
        for (const refused of [stale, gap]) {
          const now = await store.getRun(refused.run.id);
          expect(now).toMatchObject({ status: "running", version: refused.run.version });
          expect(await store.readEvents(refused.run.id)).toHaveLength(refused.run.eventSeq);
        }
      },
    );
  });
}
