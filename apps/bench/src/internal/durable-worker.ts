// A worker process for the durable bench: `durable-worker <url> <schema> <workerId> <concurrency> <leaseMs>`.
// Registers the bench's flows, prints `ready <name>=<hash> ...`, and runs until killed.
import { createDurableRuntime } from "@openrath/runtime-durable";
import { postgresStore } from "@openrath/store-postgres";
import { benchFlows } from "./durable-flows.js";

const [url, schema, workerId, concurrency, leaseMs] = process.argv.slice(2);
const store = await postgresStore({
  connectionString: url!,
  schema: schema!,
  pool: { max: Number(concurrency) + 4 },
});
const runtime = createDurableRuntime({ store });
const hashes: string[] = [];
for (const flow of benchFlows()) hashes.push(`${flow.name}=${(await runtime.register(flow)).hash}`);
await runtime
  .worker({ workerId: workerId!, concurrency: Number(concurrency), leaseMs: Number(leaseMs) })
  .start();
process.stdout.write(`ready ${hashes.join(" ")}\n`);
