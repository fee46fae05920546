import { Session } from "@openrath/core";
import { type RunStoreV1, restoreSession } from "@openrath/runtime-durable/store";
import { expect } from "vitest";
import { describeGroup } from "../internal/describe-group.js";
import { expectOpenRathError } from "../internal/expect-error.js";
import { claimOne, commit, registeredPlan, sleep, submit } from "./fixtures.js";
import type { StoreSuiteContext } from "./suite-context.js";

/** Retention policies and erasure never take what a live run needs. */
export function retentionSuite(context: StoreSuiteContext): void {
  if (!context.capabilities.retention) {
    describeGroup<RunStoreV1>(context, "retention", "store", (group) =>
      group.skip("retention policies", "no retention capability"),
    );
    return;
  }
  describeGroup<RunStoreV1>(context, "retention", "store", (group) => {
    async function finishedRun(
      store: RunStoreV1,
      plan: Awaited<ReturnType<typeof registeredPlan>>,
      session: Session,
      steps: number,
    ) {
      const { run } = await submit(store, plan, { session });
      const claim = await claimOne(store, plan);
      let current = session;
      for (let i = 0; i < steps; i++) {
        current = current.append({ kind: "assistant", content: `step ${i} of ${run.id}` });
        await commit(store, claim, current, "second", `s${i}`);
      }
      await store.finish(claim.fence, { status: "succeeded" });
      return { run, session: current };
    }

    group.test(
      "keepLastCheckpoints keeps the newest of terminal runs; a live run built on them still restores",
      async () => {
        const store = group.track(await context.create());
        const plan = await registeredPlan(store);
        const done = await finishedRun(store, plan, Session.fromUserMessage("retain me"), 5);
        const followUp = done.session.append({ kind: "user", content: "next question" });
        const live = await submit(store, plan, { session: followUp });
        const result = await store.applyRetention([{ workflow: plan.name, keepLastCheckpoints: 2 }]);
        expect(result.checkpointsDeleted).toBe(4);
        expect(await store.loadCheckpoint(done.run.id, 0)).toBeUndefined();
        expect(JSON.stringify(restoreSession((await store.loadCheckpoint(done.run.id))!).toJSON())).toBe(
          JSON.stringify(done.session.toJSON()),
        );
        expect(JSON.stringify(restoreSession((await store.loadCheckpoint(live.run.id))!).toJSON())).toBe(
          JSON.stringify(followUp.toJSON()),
        );
        expect((await store.getRun(live.run.id))!.status).toBe("queued");
      },
    );

    group.test(
      "keepForMs deletes old terminal runs with their events and unreferenced chunks, never active ones",
      async () => {
        const store = group.track(await context.create());
        const plan = await registeredPlan(store);
        const old = await finishedRun(store, plan, Session.fromUserMessage("old and done"), 2);
        const active = await submit(store, plan);
        await sleep(50);
        const result = await store.applyRetention([
          { workflow: plan.name, keepForMs: 10 },
          { workflow: "other-workflow", keepForMs: 0 },
        ]);
        expect(result.runsDeleted).toBe(1);
        expect(result.chunksDeleted).toBeGreaterThanOrEqual(3);
        expect(await store.getRun(old.run.id)).toBeUndefined();
        expect(await store.readEvents(old.run.id)).toEqual([]);
        expect(await store.getRun(active.run.id)).toMatchObject({ status: "queued" });
        expect(restoreSession((await store.loadCheckpoint(active.run.id))!).id).toBe(active.session.id);
      },
    );

    group.test(
      "erasing a session removes its runs and chunks but keeps what another session's run refers to",
      async () => {
        const store = group.track(await context.create());
        const plan = await registeredPlan(store);
        const done = await finishedRun(store, plan, Session.fromUserMessage("private"), 2);
        const fork = done.session.fork().append({ kind: "user", content: "forked on" });
        const forkRun = await submit(store, plan, { session: fork });
        await expectOpenRathError(
          () => store.eraseSession("tenant-a", fork.id),
          "session_busy",
          "eraseSession(active)",
        );
        const erased = await store.eraseSession("tenant-a", done.run.sessionId);
        expect(erased.runsDeleted).toBe(1);
        expect(await store.getRun(done.run.id)).toBeUndefined();
        expect(await store.findSessionHead("tenant-a", [done.run.sessionId])).toBeUndefined();
        expect(JSON.stringify(restoreSession((await store.loadCheckpoint(forkRun.run.id))!).toJSON())).toBe(
          JSON.stringify(fork.toJSON()),
        );
        await store.cancel(forkRun.run.id);
        const second = await store.eraseSession("tenant-a", fork.id);
        expect(second.runsDeleted).toBe(1);
        expect(second.chunksDeleted).toBeGreaterThanOrEqual(4);
      },
    );
  });
}
