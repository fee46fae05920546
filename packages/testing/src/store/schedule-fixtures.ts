import { Session } from "@openrath/core";
import type { CompiledPlan } from "@openrath/runtime-durable";
import {
  type CreateScheduleInput,
  encodeCheckpoint,
  type FiringPlan,
  type RunStoreV1,
  type ScheduleFiring,
  type SchedulesV1,
  scheduleIdempotencyKey,
} from "@openrath/runtime-durable/store";
import { expect } from "vitest";

/** The store's schedules; fails the test when the store claims the capability without them. */
export function schedulesOf(store: RunStoreV1): SchedulesV1 {
  expect(store.capabilities.schedules, "capabilities.schedules").toBe(true);
  const schedules = store.schedules;
  if (!schedules) throw new Error("the store claims capabilities.schedules but has no `schedules` member");
  expect(schedules.specVersion).toBe("v1");
  return schedules;
}

/** A schedule of `workflow` in `tenantId`, due `dueInMs` from `now` (negative: due already). */
export function scheduleInput(
  tenantId: string,
  now: number,
  dueInMs: number,
  overrides: Partial<CreateScheduleInput> = {},
): CreateScheduleInput {
  return {
    tenantId,
    workflow: "nightly",
    input: "summarize the day",
    cron: "* * * * * *",
    timezone: "UTC",
    nextFireAt: now + dueInMs,
    ...overrides,
  };
}

/**
 * A firing plan that submits a run of `plan` keyed by the schedule and fire time, and advances the
 * schedule one minute past the store's now; it records every firing it was asked to plan.
 */
export function planner(plan: CompiledPlan, fired: ScheduleFiring[] = []) {
  return async (firing: ScheduleFiring): Promise<FiringPlan> => {
    fired.push(firing);
    const { write } = encodeCheckpoint(Session.fromUserMessage(firing.schedule.input), null, {
      sequence: 0,
      stepId: null,
      nextStep: plan.entry,
    });
    return {
      nextFireAt: firing.now + 60_000,
      submit: {
        tenantId: firing.schedule.tenantId,
        planHash: plan.hash,
        checkpoint: write,
        idempotencyKey: scheduleIdempotencyKey(firing.schedule.id, firing.fireAt),
        fingerprint: `fp-${firing.schedule.id}-${firing.fireAt}`,
        ...(firing.schedule.projectId === null ? {} : { projectId: firing.schedule.projectId }),
      },
    };
  };
}
