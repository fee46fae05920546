import type { RunStoreV1, ScheduleFiring } from "@openrath/runtime-durable/store";
import { scheduleIdempotencyKey } from "@openrath/runtime-durable/store";
import { expect } from "vitest";
import { describeGroup } from "../internal/describe-group.js";
import { accessOf, auditInput, auditLog } from "./access-fixtures.js";
import { registeredPlan, sleep, submit } from "./fixtures.js";
import { planner, scheduleInput, schedulesOf } from "./schedule-fixtures.js";
import type { StoreSuiteContext } from "./suite-context.js";

/** Cron schedules and their firings, each exactly once (`capabilities.schedules`). */
export function schedulesSuite(context: StoreSuiteContext): void {
  describeGroup<RunStoreV1>(context, "schedules", "store", (group) => {
    group.test(
      "a schedule is created, read, listed by pages, changed and deleted in its tenant only; another tenant's is not found",
      async () => {
        const store = group.track(await context.create());
        const schedules = schedulesOf(store);
        const now = await store.now();
        const created = await schedules.create(
          scheduleInput("tenant-a", now, 60_000, { projectId: "alpha", metadata: { team: "ops" } }),
        );
        expect(created).toEqual({
          id: expect.any(String),
          tenantId: "tenant-a",
          projectId: "alpha",
          workflow: "nightly",
          input: "summarize the day",
          metadata: { team: "ops" },
          cron: "* * * * * *",
          timezone: "UTC",
          enabled: true,
          nextFireAt: now + 60_000,
          lastFiredAt: null,
          lastRunId: null,
          lastError: null,
          createdAt: expect.any(Number),
          updatedAt: expect.any(Number),
        });
        expect(await schedules.get("tenant-a", created.id)).toEqual(created);
        expect(await schedules.get("tenant-b", created.id)).toBeUndefined();
        expect(await schedules.get("tenant-a", "not-a-uuid")).toBeUndefined();

        const more = [];
        for (let i = 0; i < 3; i++) more.push(await schedules.create(scheduleInput("tenant-a", now, 60_000)));
        await schedules.create(scheduleInput("tenant-b", now, 60_000));
        const first = await schedules.list({ tenantId: "tenant-a", limit: 3 });
        expect(first.items).toHaveLength(3);
        expect(first.nextCursor).not.toBeNull();
        const second = await schedules.list({ tenantId: "tenant-a", limit: 3, cursor: first.nextCursor! });
        expect(second.nextCursor).toBeNull();
        expect([...first.items, ...second.items].map((s) => s.id).sort()).toEqual(
          [created, ...more].map((s) => s.id).sort(),
        );
        expect(
          (await schedules.list({ tenantId: "tenant-a", projectId: "alpha" })).items.map((s) => s.id),
        ).toEqual([created.id]);

        const changed = await schedules.update("tenant-a", created.id, {
          cron: "0 7 * * *",
          timezone: "Europe/Berlin",
          enabled: false,
          nextFireAt: null,
        });
        expect(changed).toMatchObject({
          cron: "0 7 * * *",
          timezone: "Europe/Berlin",
          enabled: false,
          nextFireAt: null,
        });
        expect(await schedules.update("tenant-b", created.id, { enabled: true })).toBeUndefined();
        expect((await schedules.get("tenant-a", created.id))?.enabled).toBe(false);

        expect(await schedules.delete("tenant-b", created.id)).toBe(false);
        expect(await schedules.delete("tenant-a", created.id)).toBe(true);
        expect(await schedules.delete("tenant-a", created.id)).toBe(false);
        expect(await schedules.get("tenant-a", created.id)).toBeUndefined();
      },
    );

    if (context.capabilities.access)
      group.test(
        "create, update and delete write their audit record in their transaction, and none for a schedule of another tenant",
        async () => {
          const store = group.track(await context.create());
          const schedules = schedulesOf(store);
          const access = accessOf(store);
          const now = await store.now();
          const created = await schedules.create(
            scheduleInput("tenant-a", now, 60_000, { audit: auditInput("schedule.write", "schedule") }),
          );
          await schedules.update("tenant-a", created.id, {
            enabled: false,
            audit: auditInput("schedule.write", "schedule"),
          });
          await schedules.update("tenant-b", created.id, {
            enabled: true,
            audit: auditInput("schedule.write", "schedule", "tenant-b"),
          });
          await schedules.delete(
            "tenant-b",
            created.id,
            auditInput("schedule.write", "schedule", "tenant-b"),
          );
          await schedules.delete("tenant-a", created.id, auditInput("schedule.write", "schedule"));
          const log = await auditLog(access, "tenant-a");
          expect(log.map((r) => [r.action, r.resourceId])).toEqual([
            ["schedule.write", created.id],
            ["schedule.write", created.id],
            ["schedule.write", created.id],
          ]);
          expect(await auditLog(access, "tenant-b")).toEqual([]);
        },
      );

    group.test(
      "a due schedule fires once with the plan its name points at: its run is submitted with the schedule's key, the schedule advanced to the plan's next time, and a second call fires nothing",
      async () => {
        const store = group.track(await context.create());
        const schedules = schedulesOf(store);
        const plan = await registeredPlan(store);
        if (store.capabilities.deployments) await store.deployments!.deploy(plan.hash);
        const now = await store.now();
        const due = await schedules.create(
          scheduleInput("tenant-a", now, -1_000, { projectId: "alpha", workflow: plan.name }),
        );
        const later = await schedules.create(scheduleInput("tenant-a", now, 60_000));
        const off = await schedules.create(scheduleInput("tenant-a", now, -1_000, { enabled: false }));
        const fired: ScheduleFiring[] = [];
        const result = await schedules.fireDue(10, planner(plan, fired));
        expect(result.runIds).toHaveLength(1);
        expect(result.failed).toBe(0);
        expect(fired.map((f) => f.schedule.id)).toEqual([due.id]);
        expect(fired[0]!.fireAt).toBe(now - 1_000);
        // The firing brings the plan its workflow name points at now (undefined when not deployed).
        if (store.capabilities.deployments) expect(fired[0]!.plan?.hash).toBe(plan.hash);
        const run = await store.getRun(result.runIds[0]!, "tenant-a");
        expect(run).toMatchObject({
          status: "queued",
          planHash: plan.hash,
          projectId: "alpha",
          idempotencyKey: scheduleIdempotencyKey(due.id, now - 1_000),
        });
        const after = await schedules.get("tenant-a", due.id);
        expect(after).toMatchObject({ lastFiredAt: now - 1_000, lastRunId: run!.id, lastError: null });
        expect(after!.nextFireAt).toBe(fired[0]!.now + 60_000);
        expect((await schedules.get("tenant-a", later.id))?.lastFiredAt).toBeNull();
        expect((await schedules.get("tenant-a", off.id))?.lastFiredAt).toBeNull();

        expect(await schedules.fireDue(10, planner(plan))).toEqual({ runIds: [], failed: 0 });
        expect(await store.listRuns({ tenantId: "tenant-a" })).toHaveLength(1);
        expect(await schedules.nextDue()).toBe(Math.min(now + 60_000, after!.nextFireAt!));
      },
    );

    group.test(
      "callers firing at once (two handles on a multi-process store) fire each due schedule exactly once",
      async () => {
        const store = group.track(await context.create());
        // An embedded store is one process's: its callers share one handle.
        const peer =
          context.peer && context.capabilities.multiProcess ? group.track(await context.peer()) : store;
        const schedules = schedulesOf(store);
        const plan = await registeredPlan(store);
        const now = await store.now();
        const ids = [];
        for (let i = 0; i < 8; i++)
          ids.push((await schedules.create(scheduleInput("tenant-a", now, -500))).id);
        const fired: ScheduleFiring[] = [];
        const slow = planner(plan, fired);
        const plan2 = async (firing: ScheduleFiring) => {
          // Holds the row lock a moment, so the callers overlap.
          await sleep(5);
          return slow(firing);
        };
        const results = await Promise.all(
          Array.from({ length: 6 }, (_, i) => schedulesOf(i % 2 ? peer : store).fireDue(4, plan2)),
        );
        const runIds = results.flatMap((r) => r.runIds);
        expect(new Set(runIds).size).toBe(runIds.length);
        expect(fired.map((f) => f.schedule.id).sort()).toEqual([...ids].sort());
        expect(runIds).toHaveLength(8);
        expect(await store.listRuns({ tenantId: "tenant-a" })).toHaveLength(8);
      },
    );

    group.test(
      "a firing whose plan throws changes nothing and stays due; one whose plan gives an error starts no run, keeps the error and advances",
      async () => {
        const store = group.track(await context.create());
        const schedules = schedulesOf(store);
        const now = await store.now();
        const schedule = await schedules.create(scheduleInput("tenant-a", now, -1_000));
        await expect(
          schedules.fireDue(1, async () => {
            throw new Error("store went away mid-plan");
          }),
        ).rejects.toThrow("store went away mid-plan");
        expect(await schedules.get("tenant-a", schedule.id)).toEqual(schedule);

        const refused = await schedules.fireDue(1, async (firing) => ({
          nextFireAt: firing.now + 60_000,
          error: { code: "unknown_plan", message: "nightly is not deployed" },
        }));
        expect(refused).toEqual({ runIds: [], failed: 1 });
        expect(await schedules.get("tenant-a", schedule.id)).toMatchObject({
          lastFiredAt: now - 1_000,
          lastRunId: null,
          lastError: { code: "unknown_plan", message: "nightly is not deployed" },
        });
        expect(await store.listRuns({ tenantId: "tenant-a" })).toEqual([]);
      },
    );

    group.test(
      "a firing whose run its key already names (submitted before under that fire time) takes that run and submits no second one",
      async () => {
        const store = group.track(await context.create());
        const schedules = schedulesOf(store);
        const plan = await registeredPlan(store);
        const now = await store.now();
        const schedule = await schedules.create(scheduleInput("tenant-a", now, -1_000));
        const key = scheduleIdempotencyKey(schedule.id, now - 1_000);
        const earlier = await submit(store, plan, { idempotencyKey: key });
        const result = await schedules.fireDue(1, planner(plan));
        expect(result.runIds).toEqual([earlier.run.id]);
        expect((await schedules.get("tenant-a", schedule.id))?.lastRunId).toBe(earlier.run.id);
        expect(await store.listRuns({ tenantId: "tenant-a" })).toHaveLength(1);
      },
    );
  });
}
