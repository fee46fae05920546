import { closeAllSandboxes, defaultRegistry, type ProviderV1, Session } from "@openrath/core";
import {
  ACTIVE_STATUSES,
  createDurableRuntime,
  type RunRecord,
  type RunStoreV1,
  type WorkerLog,
} from "@openrath/runtime-durable";
import { localSandbox } from "@openrath/sandbox-local";
import { scriptedBrain } from "../scripted-brain.js";
import { TASK } from "../task.js";
import { DurableMamsWorkflow } from "./durable-mams-workflow.js";

/** Options of {@link runDurableMams}. */
export interface DurableMamsOptions {
  /** The run store (the caller opens and closes it; e.g. `pgliteStore({ dataDir })`). */
  readonly store: RunStoreV1;
  /** The sandbox workspace the team writes its programs in. */
  readonly workspace: string;
  /** A pause at the start of every step (default 1500 ms), to have time to kill it. */
  readonly pauseMs?: number;
  /** Progress lines. */
  readonly log?: (line: string) => void;
  /** The model (default: the demo's scripted brain, no API key needed). */
  readonly provider?: ProviderV1;
  /** The worker's structured log (default: JSON lines on standard error, see `DurableWorkerOptions.log`). */
  readonly workerLog?: WorkerLog;
  /**
   * On SIGINT or SIGTERM, how long the step in flight may take to finish and commit before it is
   * stopped (default 2000 ms); either way the run goes back to the queue and the process exits 0.
   */
  readonly drainMs?: number;
}

/** What a call did: the run, whether it resumed one, and the final session. */
export interface DurableMamsResult {
  readonly run: RunRecord;
  readonly resumed: boolean;
  readonly session: Session;
}

/**
 * Runs (or resumes) the durable MAMS demo in this process: one worker with a fixed identity and the
 * run of the demo task — the active one if a previous process left it unfinished, else a new one.
 * Ctrl-C or SIGTERM: the step in flight finishes and commits, the run goes back to the queue, and
 * the next call resumes it from there.
 */
export async function runDurableMams(options: DurableMamsOptions): Promise<DurableMamsResult> {
  const log = options.log ?? (() => {});
  const registry = defaultRegistry();
  if (!registry.has("sandbox", "local")) registry.registerSandbox(localSandbox());
  const store = options.store;
  const runtime = createDurableRuntime({ store });
  const flow = new DurableMamsWorkflow(
    options.provider ?? scriptedBrain(),
    { workspace: options.workspace },
    options.pauseMs ?? 1500,
  );
  await runtime.register(flow);
  const open = await store.listRuns({ tenantId: "default", status: ACTIVE_STATUSES, limit: 50 });
  const existing = open.find((r) => r.workflow === flow.name);
  if (!existing) {
    const done = (await store.listRuns({ tenantId: "default", status: "succeeded", limit: 500 }))
      .filter((r) => r.workflow === flow.name)
      .at(-1);
    if (done) {
      log(`Run ${done.id} already finished.`);
      return { run: done, resumed: false, session: await runtime.session(done.id) };
    }
  }
  const run =
    existing ?? (await runtime.submit(flow.name, Session.fromUserMessage(TASK, { author: "user" })));
  if (existing) log(`Resuming run ${run.id}: ${run.checkpointSeq} step(s) done, next "${run.nextStep}".`);
  else log(`Started run ${run.id}.`);
  const worker = runtime.worker({
    workerId: "durable-mams-example",
    concurrency: 1,
    leaseMs: 10_000,
    ...(options.workerLog ? { log: options.workerLog } : {}),
  });
  await worker.start();
  const stopping = () =>
    log(
      "Stopping: the step in flight may finish and commit, then the run goes back to the queue; run the same command again to continue.",
    );
  process.once("SIGINT", stopping).once("SIGTERM", stopping);
  const detach = runtime.closeOnSignals({ drainMs: options.drainMs ?? 2000 });
  try {
    for await (const event of runtime.follow(run.id, { after: run.eventSeq })) {
      const data = event.data as {
        stepId?: string;
        nextStep?: string | null;
        to?: string;
        workerId?: string;
      };
      if (event.type === "run.claimed" || event.type === "run.reclaimed")
        log(`▶ ${event.type === "run.reclaimed" ? "taken back" : "claimed"} by ${data.workerId}`);
      if (event.type === "run.checkpoint")
        log(
          `✔ ${data.stepId} (checkpoint ${(event.data as { sequence: number }).sequence})${data.nextStep ? ` → ${data.nextStep}` : ""}`,
        );
      if (event.type === "run.state.changed") log(`■ ${data.to}`);
    }
    const ended = await runtime.wait(run.id);
    const session = await runtime.result(run.id);
    return { run: ended, resumed: existing !== undefined, session };
  } finally {
    process.off("SIGINT", stopping).off("SIGTERM", stopping);
    detach();
    await worker.stop({ drain: false });
    await closeAllSandboxes();
  }
}
