import { DurableError, type Fence } from "@openrath/runtime-durable/store";
import { sql } from "kysely";
import { RUN_COLUMN_NAMES, type StoreContext, tables, toRun } from "./context.js";
import type { Commit } from "./journal.js";

/** Fencing: the tokens a lease carries, the guard every worker write checks, and why one failed. */

/**
 * The fencing token a claim or reclaim issues: one more than the run's, or the database clock in
 * microseconds when that is larger. Tokens still only grow within a run's committed history (what
 * the fence checks and the effect ledger's `<` compare), and a claim made after a database crash
 * lost a relaxed claim's commit does not issue the lost token again as long as the clock has not
 * gone back by more than the outage: a worker that still holds the lost lease (the same worker
 * identity, in the same process) gets `stale_fence` instead of writing as the new lease. At about
 * 1.8e15 (2026) the values stay exact JavaScript numbers (below 2^53, about 9.0e15) until the year
 * 2255.
 */
export function nextToken() {
  return sql`greatest(r.fencing_token + 1, ${clockToken()})`;
}

/** The database clock in microseconds: the first fencing token of a run claimed as it is submitted. */
export function clockToken() {
  return sql`(extract(epoch from now()) * 1000000)::bigint`;
}

/** The fence guard every worker write carries: the lease is current by token, holder and database clock. */
export function fenceGuard(fence: Fence) {
  return sql`r.id = ${fence.runId} and r.status = 'running' and r.fencing_token = ${fence.token}
    and r.lease_holder = ${fence.workerId} and r.lease_expires_at > now()`;
}

/** Why a guarded write touched no row, as the coded error the caller gets. */
export async function diagnose(
  c: StoreContext,
  fence: Fence,
  what: string,
  expected?: { version?: number; seq?: number },
): Promise<never> {
  const row = await tables(c)
    .selectFrom("runs")
    .select([...RUN_COLUMN_NAMES, sql<boolean>`lease_expires_at <= now()`.as("expired")])
    .where("id", "=", fence.runId)
    .executeTakeFirst();
  if (!row) throw notFound(fence.runId);
  const run = toRun(row);
  const details = {
    runId: run.id,
    status: run.status,
    token: fence.token,
    currentToken: run.fencingToken,
    workerId: fence.workerId,
  };
  if (run.status !== "running") {
    throw new DurableError(
      "stale_fence",
      `Cannot ${what} run ${run.id}: it is ${run.status} now, not running under this lease.`,
      { details },
    );
  }
  if (run.fencingToken !== fence.token || run.leaseHolder !== fence.workerId) {
    throw new DurableError(
      "stale_fence",
      `Cannot ${what} run ${run.id}: fencing token ${fence.token} of ${fence.workerId} is stale; the lease is now token ${run.fencingToken} of ${run.leaseHolder}.`,
      { details },
    );
  }
  if (row.expired) {
    throw new DurableError(
      "stale_fence",
      `Cannot ${what} run ${run.id}: the lease of ${fence.workerId} expired (database clock).`,
      { details },
    );
  }
  if (expected?.version !== undefined && run.version !== expected.version) {
    throw new DurableError(
      "version_conflict",
      `Cannot ${what} run ${run.id}: expected version ${expected.version}, it is ${run.version}.`,
      {
        details: { ...details, expected: expected.version, actual: run.version },
      },
    );
  }
  if (expected?.seq !== undefined && run.checkpointSeq !== expected.seq - 1) {
    throw new DurableError(
      "version_conflict",
      `Cannot ${what} run ${run.id}: checkpoint ${expected.seq} does not follow the last committed checkpoint ${run.checkpointSeq}.`,
      { details: { ...details, sequence: expected.seq, last: run.checkpointSeq } },
    );
  }
  throw new DurableError("version_conflict", `Cannot ${what} run ${run.id}: it changed concurrently.`, {
    details,
  });
}

/** The `run_not_found` error. */
export function notFound(runId: string): DurableError {
  return new DurableError("run_not_found", `No run ${runId}.`, { details: { runId } });
}

/**
 * The fence guard as a CTE that share-locks the run row (a claim or requeue waits until the write
 * commits) and, for a relaxed commit, turns `synchronous_commit` off for this statement's transaction.
 */
export function guardCte(c: StoreContext, fence: Fence, commit: Commit = "strict") {
  const relax =
    commit === "relaxed" ? sql`, set_config('synchronous_commit', 'off', true) as relaxed` : sql``;
  // Raw: a CTE for the journal's raw statements.
  return sql`guard as (select r.id, r.tenant_id, r.checkpoint_seq${relax} from ${c.t.runs} r where ${fenceGuard(fence)} for share of r)`;
}
