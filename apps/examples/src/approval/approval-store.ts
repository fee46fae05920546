import { mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { createDurableRuntime, type DurableRuntime, type RunStoreV1 } from "@openrath/runtime-durable";
import { pgliteStore, postgresStore } from "@openrath/store-postgres";
import { approvalWorkflow } from "./approval-workflow.js";

/** Where the example keeps its state. */
export interface ExampleTarget {
  /** The example's directory: the embedded database, the outbox, the worker's pid file. */
  readonly dir: string;
  /** A PostgreSQL URL instead of the embedded database (then any number of processes may share it). */
  readonly postgres?: string;
}

/** The outbox file the send tool appends to. */
export const outboxOf = (dir: string) => join(dir, "outbox.jsonl");
const pidFileOf = (dir: string) => join(dir, "worker.pid");

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

/**
 * Opens the store and a runtime with the example's workflow registered. With the embedded
 * database only one process may have it open: the worker writes a pid file, and a one-shot command
 * refuses to open the database while that worker is alive (type the command into the worker's
 * prompt instead, or use PostgreSQL).
 */
export async function openExample(
  target: ExampleTarget,
  role: "worker" | "command",
): Promise<{ store: RunStoreV1; runtime: DurableRuntime; release: () => Promise<void> }> {
  mkdirSync(target.dir, { recursive: true });
  const pidFile = pidFileOf(target.dir);
  if (!target.postgres) {
    let pid = 0;
    try {
      pid = Number(readFileSync(pidFile, "utf8"));
    } catch {
      pid = 0;
    }
    if (pid > 0 && pid !== process.pid && alive(pid)) {
      throw new Error(
        `The worker (pid ${pid}) has the embedded database in ${target.dir} open. Type the command into its prompt, stop it first, or use --postgres.`,
      );
    }
    if (role === "worker") writeFileSync(pidFile, String(process.pid));
  }
  const store = target.postgres
    ? await postgresStore({ connectionString: target.postgres, migrate: true })
    : await pgliteStore({ dataDir: join(target.dir, "db") });
  const runtime = createDurableRuntime({ store });
  await runtime.register(approvalWorkflow(outboxOf(target.dir)));
  return {
    store,
    runtime,
    release: async () => {
      await store.close();
      if (!target.postgres && role === "worker") rmSync(pidFile, { force: true });
    },
  };
}
