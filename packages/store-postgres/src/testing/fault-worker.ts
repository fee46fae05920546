/**
 * A worker process for the fault tests: `fault-worker <url> <schema> <workerId> <stepMs> <leaseMs> <concurrency>`.
 * Prints `ready <plan hash>` once it is claiming; runs until killed.
 */
import { createDurableRuntime } from "@openrath/runtime-durable";
import pg from "pg";
import { postgresStore } from "../postgres-store.js";
import { faultWorkflow } from "./fault-workflow.js";

const [url, schema, workerId, stepMs, leaseMs, concurrency] = process.argv.slice(2);
const log = new pg.Pool({ connectionString: url, max: 4 });
log.on("error", () => {});
log.on("connect", (client) => {
  client.on("error", () => {});
});
const store = await postgresStore({ connectionString: url!, schema: schema!, pool: { max: 6 } });
const runtime = createDurableRuntime({ store });
const plan = await runtime.register(faultWorkflow(log, workerId!, Number(stepMs)));
const worker = runtime.worker({
  workerId: workerId!,
  leaseMs: Number(leaseMs),
  concurrency: Number(concurrency),
});
await worker.start();
process.stdout.write(`ready ${plan.hash}\n`);
process.on("SIGTERM", () => {
  worker.stop({ drain: false }).finally(() => process.exit(0));
});
