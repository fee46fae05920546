/**
 * A worker process for the fault tests:
 * `fault-worker <url> <schema> <workerId> <stepMs> <leaseMs> <concurrency> [<steps> <emit 0|1> <holdMs>]`.
 * With `holdMs`, every step commit waits that long before it is sent (a slow database: the steps
 * that finish meanwhile are committed in one batch). Prints `ready <plan hash>` once it is
 * claiming; runs until killed. SIGTERM closes the runtime as a deployment would: the steps in
 * flight finish within `OPENRATH_DRAIN_MS` (default 0: aborted at once), the runs go back to the queue.
 */
import { createDurableRuntime } from "@openrath/runtime-durable";
import pg from "pg";
import { postgresStore } from "../postgres-store.js";
import { faultWorkflow } from "./fault-workflow.js";

const [url, schema, workerId, stepMs, leaseMs, concurrency, steps = "3", emit = "1", holdMs = "0"] =
  process.argv.slice(2);
const log = new pg.Pool({ connectionString: url, max: 4 });
log.on("error", () => {});
log.on("connect", (client) => {
  client.on("error", () => {});
});
const store = await postgresStore({ connectionString: url!, schema: schema!, pool: { max: 6 } });
const hold = Number(holdMs);
const held =
  hold > 0
    ? new Proxy(store, {
        get(target, key) {
          const value = Reflect.get(target, key, target);
          const held =
            (commit: (...args: never[]) => Promise<unknown>) =>
            async (...args: never[]) => {
              await new Promise((r) => setTimeout(r, hold));
              return commit(...args);
            };
          if (key === "groupCommit") return { ...value, commitSteps: held(value.commitSteps) };
          if (typeof value !== "function") return value;
          if (key !== "commitStep") return value.bind(target);
          return held(value.bind(target));
        },
      })
    : store;
const runtime = createDurableRuntime({ store: held });
const plan = await runtime.register(
  faultWorkflow(log, workerId!, Number(stepMs), { steps: Number(steps), emit: emit === "1" }),
);
const worker = runtime.worker({
  workerId: workerId!,
  leaseMs: Number(leaseMs),
  concurrency: Number(concurrency),
  drainMs: Number(process.env.OPENRATH_DRAIN_MS ?? 0),
});
await worker.start();
runtime.closeOnSignals({ signals: ["SIGTERM"] });
process.stdout.write(`ready ${plan.hash}\n`);
