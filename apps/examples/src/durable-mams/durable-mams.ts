/**
 * The MAMS demo, durable: run it, kill it (Ctrl-C twice, or `kill -9`) in the middle, run the same
 * command again and watch it continue from the last finished step.
 *
 *   pnpm --filter @openrath/examples run durable-mams [-- --dir <dir>] [--pause-ms 1500] [--fresh]
 *
 * State lives in an embedded PGlite database under `--dir` (default `.openrath/durable-mams`); the
 * worker restarts under the same identity, so it takes its run back at once.
 */
import { rm } from "node:fs/promises";
import { join, resolve } from "node:path";
import { parseArgs } from "node:util";
import { runDurableMams } from "@openrath/demo/durable";
import { pgliteStore } from "@openrath/store-postgres";

async function main() {
  const { values } = parseArgs({
    options: { dir: { type: "string" }, "pause-ms": { type: "string" }, fresh: { type: "boolean" } },
  });
  const dir = resolve(values.dir ?? ".openrath/durable-mams");
  if (values.fresh) await rm(dir, { recursive: true, force: true });
  const print = (line: string) => process.stdout.write(`${line}\n`);
  print(`OpenRath durable MAMS demo — state in ${dir}. Kill it any time and run the same command again.`);
  const store = await pgliteStore({ dataDir: join(dir, "db") });
  try {
    const { session } = await runDurableMams({
      store,
      workspace: join(dir, "workspace"),
      pauseMs: Number(values["pause-ms"] ?? 1500),
      log: print,
    });
    print(`\nAnswer: ${session.text() ?? "(no answer)"}`);
  } finally {
    await store.close();
  }
  print("Run it again to see the finished run's answer at once, or pass --fresh to start over.");
}

await main();
