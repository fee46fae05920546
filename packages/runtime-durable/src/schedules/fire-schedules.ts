import { Session } from "@openrath/core";
import { encodeCheckpoint } from "../checkpoint/delta-codec.js";
import type { RunStoreV1 } from "../contract/run-store.js";
import {
  type FireResult,
  type FiringPlan,
  type ScheduleFiring,
  scheduleIdempotencyKey,
} from "../contract/schedules.js";
import { canonicalJson, sha256 } from "../internal/canonical.js";
import { nextFireTime } from "./cron.js";

/** How many due firings one call fires at most. */
const FIRE_BATCH = 16;

/**
 * The next fire time after a firing: after the database's now, so firings missed while nothing
 * ran collapse into the one being fired (see ADR 0031).
 */
function nextAfter({ schedule, fireAt, now }: ScheduleFiring): number | null {
  try {
    return nextFireTime(schedule.cron, schedule.timezone, Math.max(fireAt, now));
  } catch {
    // Checked when stored; an expression this parser no longer reads stops the schedule.
    return null;
  }
}

/**
 * What one firing does: a run of the revision the schedule's workflow name points at now (the
 * store read it in the firing's transaction) on a new session holding the schedule's input, keyed
 * by the schedule and the fire time. Reads nothing from the store.
 */
function planFiring(store: RunStoreV1, firing: ScheduleFiring): FiringPlan {
  const { schedule, fireAt, plan } = firing;
  const nextFireAt = nextAfter(firing);
  if (!plan)
    return {
      nextFireAt,
      error: {
        code: "unknown_plan",
        message: `No workflow named ${JSON.stringify(schedule.workflow)} is deployed in the ${store.name} store; the firing at ${new Date(fireAt).toISOString()} started no run.`,
      },
    };
  const session = Session.fromUserMessage(schedule.input);
  const { write } = encodeCheckpoint(session, null, {
    sequence: 0,
    stepId: null,
    nextStep: String(plan.definition.entry),
  });
  return {
    nextFireAt,
    submit: {
      tenantId: schedule.tenantId,
      planHash: plan.hash,
      checkpoint: write,
      priority: 0,
      idempotencyKey: scheduleIdempotencyKey(schedule.id, fireAt),
      fingerprint: sha256(canonicalJson({ scheduleId: schedule.id, fireAt })),
      metadata: {
        ...schedule.metadata,
        schedule: { id: schedule.id, fireAt: new Date(fireAt).toISOString() },
      },
      ...(schedule.projectId === null ? {} : { projectId: schedule.projectId }),
      ...(store.capabilities.access
        ? {
            audit: {
              tenantId: schedule.tenantId,
              actor: `schedule:${schedule.id}`,
              action: "run.create",
              outcome: "allowed" as const,
              resourceKind: "run",
              attributes: { scheduleId: schedule.id, fireAt },
            },
          }
        : {}),
    },
  };
}

/**
 * Fires the store's due schedules (`capabilities.schedules`), each once across every caller:
 * what a worker does on its schedule tick. A store without schedules fires nothing.
 */
export async function fireSchedules(store: RunStoreV1, limit = FIRE_BATCH): Promise<FireResult> {
  const schedules = store.capabilities.schedules ? store.schedules : undefined;
  if (!schedules) return { runIds: [], failed: 0 };
  return schedules.fireDue(limit, async (firing) => planFiring(store, firing));
}
