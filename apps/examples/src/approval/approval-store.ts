import { mkdirSync } from "node:fs";
import { join } from "node:path";
import { OpenRathError } from "@openrath/core";
import { createDurableRuntime, type DurableRuntime, type RunStoreV1 } from "@openrath/runtime-durable";
import { pgliteStore, postgresStore } from "@openrath/store-postgres";
import { approvalWorkflow } from "./approval-workflow.js";

/** Where the example keeps its state. */
export interface ExampleTarget {
  /** The example's directory: the embedded database and the outbox. */
  readonly dir: string;
  /** A PostgreSQL URL instead of the embedded database (then any number of processes may share it). */
  readonly postgres?: string;
}

/** The outbox file the send tool appends to. */
export const outboxOf = (dir: string) => join(dir, "outbox.jsonl");

/**
 * Opens the store and a runtime with the example's workflow registered. With the embedded
 * database only one process may have it open (the store locks its directory): a one-shot command
 * is turned away while the worker runs (type the command into the worker's prompt instead, or use
 * PostgreSQL).
 */
export async function openExample(
  target: ExampleTarget,
): Promise<{ store: RunStoreV1; runtime: DurableRuntime; release: () => Promise<void> }> {
  mkdirSync(target.dir, { recursive: true });
  let store: RunStoreV1;
  try {
    store = target.postgres
      ? await postgresStore({ connectionString: target.postgres, migrate: true })
      : await pgliteStore({ dataDir: join(target.dir, "db") });
  } catch (error) {
    if (!OpenRathError.isInstance(error, "store_locked")) throw error;
    throw new Error(
      `The worker has the embedded database in ${target.dir} open. Type the command into its prompt, stop it first, or use --postgres. (${error.message})`,
    );
  }
  const runtime = createDurableRuntime({ store });
  await runtime.register(approvalWorkflow(outboxOf(target.dir)));
  return {
    store,
    runtime,
    release: () => store.close(),
  };
}
