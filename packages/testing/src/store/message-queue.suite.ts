import { Session } from "@openrath/core";
import type { MessageQueueV1, RunStoreV1 } from "@openrath/runtime-durable/store";
import { expect } from "vitest";
import { describeGroup } from "../internal/describe-group.js";
import { accessOf, auditInput, auditLog } from "./access-fixtures.js";
import { claimOne, registeredPlan, sleep, submit } from "./fixtures.js";
import type { StoreSuiteContext } from "./suite-context.js";

function queueOf(store: RunStoreV1): MessageQueueV1 {
  expect(store.capabilities.messageQueue, "capabilities.messageQueue").toBe(true);
  const queue = store.messageQueue;
  if (!queue) throw new Error("the store claims capabilities.messageQueue but has no `messageQueue` member");
  expect(queue.specVersion).toBe("v1");
  return queue;
}

/** Messages queued behind a session's active run (`capabilities.messageQueue`). */
export function messageQueueSuite(context: StoreSuiteContext): void {
  describeGroup<RunStoreV1>(context, "message queue", "store", (group) => {
    group.test(
      "a message waits while its session has an active run, then is taken once, oldest of its session first; another tenant's is not found",
      async () => {
        const store = group.track(await context.create());
        const queue = queueOf(store);
        const plan = await registeredPlan(store);
        const session = Session.fromUserMessage("first");
        const { run } = await submit(store, plan, { session });
        const first = await queue.enqueue({
          tenantId: "tenant-a",
          projectId: "alpha",
          sessionId: session.id,
          workflow: plan.name,
          input: "second",
          metadata: { via: "api" },
        });
        expect(first).toMatchObject({
          tenantId: "tenant-a",
          projectId: "alpha",
          sessionId: session.id,
          input: "second",
          metadata: { via: "api" },
          priority: 0,
          status: "pending",
          runId: null,
          error: null,
        });
        await sleep(2);
        const second = await queue.enqueue({
          tenantId: "tenant-a",
          sessionId: session.id,
          workflow: plan.name,
          input: "third",
        });
        // A message of a free session (none active) is ready at once.
        const free = await queue.enqueue({
          tenantId: "tenant-b",
          sessionId: session.id,
          workflow: plan.name,
          input: "x",
        });
        expect(await queue.get("tenant-b", first.id)).toBeUndefined();
        expect(await queue.get("tenant-a", first.id)).toEqual(first);

        expect((await queue.takeReady(10, 60_000)).map((m) => m.id)).toEqual([free.id]);
        const claim = await claimOne(store, plan);
        await store.finish(claim.fence, { status: "succeeded" });
        expect(run.id).toBe(claim.run.id);
        // The session is free: its oldest message only, once.
        expect((await queue.takeReady(10, 60_000)).map((m) => m.id)).toEqual([first.id]);
        expect(await queue.takeReady(10, 60_000)).toEqual([]);
        expect(await queue.complete(first.id, { runId: run.id })).toMatchObject({
          status: "submitted",
          runId: run.id,
        });
        expect(await queue.complete(first.id, { runId: run.id })).toBeUndefined();
        // Then the next one of that session.
        const next = await queue.takeReady(10, 60_000);
        expect(next.map((m) => m.id)).toEqual([second.id]);
        await queue.release(second.id);
        expect((await queue.takeReady(10, 60_000)).map((m) => m.id)).toEqual([second.id]);
        expect(
          await queue.complete(second.id, { error: { code: "unknown_plan", message: "gone" } }),
        ).toMatchObject({ status: "failed", error: { code: "unknown_plan", message: "gone" } });
      },
    );

    if (context.capabilities.access)
      group.test("a message's audit record is written in its transaction", async () => {
        const store = group.track(await context.create());
        const queue = queueOf(store);
        const message = await queue.enqueue({
          tenantId: "tenant-a",
          sessionId: "s-1",
          workflow: "w",
          input: "hi",
          audit: auditInput("run.create", "queued_message"),
        });
        const log = await auditLog(accessOf(store), "tenant-a");
        expect(log.map((r) => [r.action, r.resourceKind, r.resourceId])).toEqual([
          ["run.create", "queued_message", message.id],
        ]);
      });

    group.test(
      "callers taking at once (two handles on a multi-process store) take each ready message once",
      async () => {
        const store = group.track(await context.create());
        const peer =
          context.peer && context.capabilities.multiProcess ? group.track(await context.peer()) : store;
        const queue = queueOf(store);
        const ids: string[] = [];
        for (let i = 0; i < 8; i++)
          ids.push(
            (await queue.enqueue({ tenantId: "tenant-a", sessionId: `s-${i}`, workflow: "w", input: "hi" }))
              .id,
          );
        const taken = (
          await Promise.all(
            Array.from({ length: 4 }, (_, i) => queueOf(i % 2 ? peer : store).takeReady(3, 60_000)),
          )
        ).flat();
        expect(taken.map((m) => m.id).sort()).toEqual([...ids].sort());
      },
    );
  });
}
