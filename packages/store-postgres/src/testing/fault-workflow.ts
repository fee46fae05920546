import type { Session } from "@openrath/core";
import { defineWorkflow, type StepContext, type WorkflowBuilder } from "@openrath/runtime-durable";
import type pg from "pg";

/** The fault workflow's step names, in order (its first `steps` of them). */
export const FAULT_STEPS = ["one", "two", "three", "four", "five", "six"] as const;

/**
 * The workflow the fault tests run in worker processes: three steps (or `steps`) that each record
 * their start in `fault_log` (an outside effect, on its own connection), sleep `stepMs` (aborting
 * with the step's signal), emit a progress event (unless `emit` is false: then nothing in a step
 * waits for the earlier steps' commits, and the worker commits the steps that finish during a
 * commit in one batch) and append a chunk naming the worker.
 */
export function faultWorkflow(
  pool: pg.Pool,
  workerId: string,
  stepMs: number,
  { steps = 3, emit = true }: { readonly steps?: number; readonly emit?: boolean } = {},
): WorkflowBuilder {
  // The log is the test's instrument, not the system under test: it retries through a restart.
  const log = {
    async query(text: string, values: unknown[]) {
      for (let attempt = 0; ; attempt++) {
        try {
          return await pool.query(text, values);
        } catch (error) {
          if (attempt >= 100) throw error;
          await new Promise((r) => setTimeout(r, 100));
        }
      }
    },
  };
  const body = async (session: Session, ctx: StepContext) => {
    await log.query(
      "insert into fault_log (run_id, step, worker, what, token) values ($1, $2, $3, 'start', $4)",
      [ctx.runId, ctx.stepId, workerId, ctx.fence.token],
    );
    await new Promise<void>((resolve, reject) => {
      const onAbort = () => {
        clearTimeout(timer);
        log
          .query(
            "insert into fault_log (run_id, step, worker, what, token) values ($1, $2, $3, 'aborted', $4)",
            [ctx.runId, ctx.stepId, workerId, ctx.fence.token],
          )
          .finally(() => reject(ctx.signal.reason));
      };
      const timer = setTimeout(() => {
        ctx.signal.removeEventListener("abort", onAbort);
        resolve();
      }, stepMs);
      ctx.signal.addEventListener("abort", onAbort, { once: true });
    });
    try {
      if (emit) await ctx.emit("step.progress", { worker: workerId, step: ctx.stepId });
    } catch (error) {
      await log.query(
        "insert into fault_log (run_id, step, worker, what, token) values ($1, $2, $3, 'emit_rejected', $4)",
        [ctx.runId, ctx.stepId, workerId, ctx.fence.token],
      );
      throw error;
    }
    return session.append({ kind: "assistant", content: `${ctx.stepId} by ${workerId}`, author: ctx.stepId });
  };
  const flow = defineWorkflow("faults");
  const names = FAULT_STEPS.slice(0, steps);
  names.forEach((name, i) => {
    flow.step(name, body, { entry: i === 0, ...(i + 1 < names.length ? { next: names[i + 1]! } : {}) });
  });
  return flow;
}

/** The side table the fault workflow logs into. */
export const FAULT_LOG_DDL =
  "create table if not exists fault_log (id bigserial primary key, run_id uuid not null, step text not null, worker text not null, what text not null, token bigint not null, at timestamptz not null default clock_timestamp())";
