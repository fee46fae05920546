import { newId } from "@openrath/core/backend";
import {
  DurableError,
  type RunRecord,
  type SubmitClaim,
  type SubmitHooks,
  type SubmitInput,
} from "@openrath/runtime-durable/store";
import { type Kysely, type RawBuilder, sql } from "kysely";
import type { Database } from "../schema.js";
import { checkAudit, checkProjectId } from "./access-inputs.js";
import { auditCte } from "./audit-rows.js";
import {
  type CheckpointValues,
  checkpointValues,
  insertArtifacts,
  insertCheckpoint,
  sessionHeads,
  upsertHead,
} from "./chunk-rows.js";
import { grouped, RUN_COLUMN_NAMES, RUN_COLUMNS, type StoreContext, tables, toRun } from "./context.js";
import { clockToken } from "./fencing.js";

/**
 * One submission: its input, the session ids whose heads forbid it (`submitIfNew`), the worker it
 * claims its run for (`claimOnSubmit`), its hooks.
 */
export interface SubmitItem {
  readonly input: SubmitInput;
  readonly unlessHeads?: readonly string[];
  readonly claim?: SubmitClaim;
  readonly hooks?: SubmitHooks;
}

/** What a submission gives back: the run and whether it created it, or `undefined` (`submitIfNew` wrote nothing). */
export type SubmitOutcome = { run: RunRecord; created: boolean } | undefined;

/**
 * The most submissions one statement carries (each batch size and shape is its own prepared
 * statement, so the bound also bounds the statements a connection keeps).
 */
export const SUBMIT_BATCH = 8;

/** The statuses of a session's one active run. */
const ACTIVE = ["queued", "running", "waiting", "needs_review"] as const;

/**
 * On a server (relaxed step durability, the default), a submission commits without waiting for
 * the WAL flush and notifies inside its transaction, so a worker can claim it at once; the call
 * then waits for a (shared) flush before it answers: the caller learns of a run only once it is
 * durable, and a worker may start one a database crash then loses (ADR 0018, decision 1).
 */
const early = (c: StoreContext) => c.multiProcess && c.relaxedSteps;

/**
 * The CTEs inserting item `i`'s run with its checkpoint 0 and `run.created` event (named with the
 * suffix `_i`), and with a claim, when the run may start at once, its lease and `run.claimed`
 * event; with `relaxed`, the statement commits without waiting for the WAL flush.
 */
function submitCtes(c: StoreContext, { input, unlessHeads, claim }: SubmitItem, i: number, relaxed: boolean) {
  const n = (base: string) => sql.raw(`${base}_${i}`);
  const cp = checkpointValues(c, input.checkpoint);
  const metadata = JSON.stringify(input.metadata ?? {});
  const deadline = input.deadline === undefined ? null : new Date(input.deadline);
  const notBefore = input.notBefore === undefined ? null : new Date(input.notBefore);
  const ins = n("ins");
  const project = input.projectId ?? null;
  const trace = input.traceContext === undefined ? null : JSON.stringify(input.traceContext);
  const notify =
    c.publish && !early(c)
      ? sql`select 1 from ${ins} where false`
      : sql`select pg_notify(${c.channels.work}, x.plan_hash) from ${ins} x${claim ? sql` where x.status = 'queued'` : sql``}`;
  // With a claim: the run starts leased to that worker when a claim could take it now: it is due,
  // its tenant has no running cap, and no queued run of its plan that a claim would take first
  // (as high a priority, due) is waiting.
  const claimCte = claim
    ? sql`${n("ok")} as materialized (select (${notBefore}::timestamptz is null or ${notBefore}::timestamptz <= now())
        and not exists (select 1 from ${c.t.limits} l where l.tenant_id = ${input.tenantId})
        and not exists (select 1 from ${c.t.runs} q where q.status = 'queued' and q.priority >= ${input.priority ?? 0}
          and q.plan_hash = ${input.planHash} and q.not_before <= now()) as claimed),
    `
    : sql``;
  const started = (then: RawBuilder<unknown>, otherwise: RawBuilder<unknown>) =>
    claim ? sql`case when o.claimed then ${then} else ${otherwise} end` : otherwise;
  // Raw: data-modifying CTEs of the grouped statement (see `grouped`).
  const ctes = sql`${n("plan")} as (select hash, name from ${c.t.plans} where hash = ${input.planHash}),
    ${n("cid")} as (select nextval(${c.t.checkpointIds}) as id),
    ${claimCte}${ins} as (
      insert into ${c.t.runs} (id, tenant_id, session_id, plan_hash, workflow, status, priority, idempotency_key,
        fingerprint, next_step, deadline, metadata, not_before, queued_at, event_seq, checkpoint_seq, checkpoint_id${
          project === null ? sql`` : sql`, project_id`
        }${trace === null ? sql`` : sql`, trace_context`}${claim ? sql`, version, fencing_token, lease_holder, lease_expires_at` : sql``})
      select ${newId()}, ${input.tenantId}, ${cp.sessionId}, p.hash, p.name, ${started(sql`'running'`, sql`'queued'`)}, ${input.priority ?? 0},
        ${input.idempotencyKey ?? null}, ${input.fingerprint}, ${input.checkpoint.nextStep}, ${deadline}, ${metadata},
        coalesce(${notBefore}::timestamptz, now()), now(), ${started(sql`2`, sql`1`)}, 0, k.id${project === null ? sql`` : sql`, ${project}`}${trace === null ? sql`` : sql`, ${trace}::jsonb`}${
          claim
            ? sql`, ${started(sql`2`, sql`1`)}, ${started(clockToken(), sql`0`)},
        ${started(sql`${claim.workerId}`, sql`null`)}, ${started(sql`now() + ${claim.leaseMs} * interval '1 millisecond'`, sql`null`)}`
            : sql``
        }
      from ${n("plan")} p, ${n("cid")} k${claim ? sql`, ${n("ok")} o` : sql``}
      ${unlessHeads ? sql`where not exists ${sessionHeads(c, input.tenantId, unlessHeads)}` : sql``}
      on conflict do nothing
      returning ${RUN_COLUMNS}
    ),
    ${n("cp")} as (${insertCheckpoint(c, cp, ins, false)}),
    ${n("ca")} as (${insertArtifacts(c, cp, ins)}),
    ${n("hd")} as (${upsertHead(c, cp, ins)}),
    ${n("ev")} as (
      insert into ${c.t.events} (run_id, seq, type, data)
      select x.id, 1, 'run.created', json_build_object('status', 'queued', 'planHash', x.plan_hash, 'sessionId', x.session_id)::text
      from ${ins} x${
        claim
          ? sql`
      union all
      select x.id, 2, 'run.claimed', json_build_object('workerId', x.lease_holder, 'fencingToken', x.fencing_token, 'attempt', x.attempt, 'from', 'queued', 'to', 'running')::text
      from ${ins} x where x.status = 'running'`
          : sql``
      }
    ),
    ${n("nt")} as (${notify})${
      input.audit
        ? sql`,
    ${n("au")} as (${auditCte(c, input.audit, ins)})`
        : sql``
    }`;
  const select = sql`select ${i}::int as item, x.*, (select count(*) from ${n("nt")}) as notified, (select count(*) from ${n("cp")}) as checkpoints${relaxed ? sql`, set_config('synchronous_commit', 'off', true) as relaxed` : sql``} from ${ins} x`;
  return { ctes, select, cp };
}

/**
 * Inserts the items' runs in one statement; per item, the run it created, or `undefined` when its
 * insert wrote nothing (a conflict, a head, an unknown plan: {@link settleNotInserted} tells which).
 * Calls each created run's `onCommitted` hook; neither flushes nor publishes.
 */
async function insertRuns(
  c: StoreContext,
  items: readonly SubmitItem[],
  relaxed: boolean,
): Promise<(RunRecord | undefined)[]> {
  const parts = items.map((item, i) => submitCtes(c, item, i, relaxed));
  // Raw: each item's run, checkpoint, head, events and notify: data-modifying CTEs of one statement.
  const result = await grouped(parts).execute(c.db);
  const created: (RunRecord | undefined)[] = items.map(() => undefined);
  for (const row of result.rows) {
    const i = Number(row.item);
    const run = toRun(row);
    const cp: CheckpointValues = parts[i]!.cp;
    c.contexts.set(run.checkpointId, cp.context);
    created[i] = run;
    // Committed (relaxed: not yet flushed): other signals than ours may wake workers now.
    try {
      items[i]!.hooks?.onCommitted?.(run);
    } catch {
      // The caller's hook failing is not the submission failing.
    }
  }
  return created;
}

/**
 * Why an item's insert wrote nothing, as its outcome: `undefined` for a head (`submitIfNew`), the
 * earlier run of its idempotency key, or the coded error; when none applies (a concurrent
 * submission won a race and finished since), the item is submitted again.
 */
async function settleNotInserted(c: StoreContext, item: SubmitItem): Promise<SubmitOutcome> {
  const { input, unlessHeads } = item;
  if (unlessHeads) {
    // Raw: `exists` over the `union all` of head probes (ADR 0018, decision 9).
    const head = await sql<{
      found: boolean;
    }>`select exists ${sessionHeads(c, input.tenantId, unlessHeads)} as found`.execute(c.db);
    if (head.rows[0]?.found) return undefined;
  }
  const plan = await tables(c)
    .selectFrom("plans")
    .select("hash")
    .where("hash", "=", input.planHash)
    .executeTakeFirst();
  if (!plan) {
    throw new DurableError(
      "unknown_plan",
      `No plan ${input.planHash} is registered; register the workflow (runtime.register) before submitting runs for it.`,
      { details: { planHash: input.planHash } },
    );
  }
  if (input.idempotencyKey !== undefined) {
    const prior = await tables(c)
      .selectFrom("runs")
      .select(RUN_COLUMN_NAMES)
      .where("tenant_id", "=", input.tenantId)
      .where("idempotency_key", "=", input.idempotencyKey)
      .executeTakeFirst();
    if (prior) {
      const run = toRun(prior);
      if (run.fingerprint === input.fingerprint) {
        // The first submission may still be waiting for its flush: this answer waits for one too.
        if (early(c)) await c.flushed();
        return { run, created: false };
      }
      throw new DurableError(
        "idempotency_conflict",
        `Idempotency key ${JSON.stringify(input.idempotencyKey)} of tenant ${JSON.stringify(input.tenantId)} was used for a different request (run ${run.id}); use a new key for a new request.`,
        { details: { runId: run.id, idempotencyKey: input.idempotencyKey } },
      );
    }
  }
  const sessionId = input.checkpoint.sessionId;
  // The statuses as literals, as the partial index `runs_one_active_per_session` names them.
  const busy = await tables(c)
    .selectFrom("runs")
    .select(["id", "status"])
    .where("tenant_id", "=", input.tenantId)
    .where("session_id", "=", sessionId)
    .where(
      "status",
      "in",
      ACTIVE.map((status) => sql.lit(status)),
    )
    .executeTakeFirst();
  if (busy) {
    throw new DurableError(
      "session_busy",
      `Session ${sessionId} already has an active run ${String(busy.id)} (${String(busy.status)}); a session has at most one active run. Wait for it, cancel it, or fork the session.`,
      { details: { sessionId, runId: String(busy.id), status: busy.status } },
    );
  }
  const [again] = await submitRuns(c, [item]);
  if (again instanceof Error) throw again;
  return again;
}

/** Refuses a submission's malformed project or audit record before anything is written. */
export function checkSubmission(input: SubmitInput): void {
  if (input.projectId != null) checkProjectId(input.projectId);
  if (input.audit !== undefined) checkAudit(input.audit);
}

/** Refuses a malformed claim before anything is written. */
export function checkClaim(claim: SubmitClaim): void {
  if (
    typeof claim !== "object" ||
    claim === null ||
    typeof claim.workerId !== "string" ||
    claim.workerId === "" ||
    typeof claim.leaseMs !== "number" ||
    !Number.isFinite(claim.leaseMs) ||
    claim.leaseMs <= 0
  ) {
    throw new DurableError(
      "invalid_argument",
      `A submission's claim needs a worker id and a lease of more than 0 ms, got worker ${JSON.stringify(claim?.workerId)} and lease ${String(claim?.leaseMs)}.`,
      { details: { workerId: String(claim?.workerId), leaseMs: String(claim?.leaseMs) } },
    );
  }
}

/** Whether two submissions may not share a statement (one would see the other as a conflict). */
const clash = (a: SubmitInput, b: SubmitInput) =>
  a.tenantId === b.tenantId &&
  (a.checkpoint.sessionId === b.checkpoint.sessionId ||
    (a.idempotencyKey !== undefined && a.idempotencyKey === b.idempotencyKey));

/**
 * Submits runs (each `RunStoreV1.submit`, or `submitIfNew` with `unlessHeads`) with one insert
 * statement for all of them, and on a server one shared WAL flush before any answers. Items that
 * would meet in a conflict (same session or idempotency key of one tenant) are submitted after,
 * alone. Returns, per item, its outcome or the error that item alone gets.
 */
export async function submitRuns(
  c: StoreContext,
  items: readonly SubmitItem[],
): Promise<(SubmitOutcome | Error)[]> {
  const together: number[] = [];
  const after: number[] = [];
  for (const [i, item] of items.entries()) {
    if (together.some((j) => clash(items[j]!.input, item.input))) after.push(i);
    else together.push(i);
  }
  // Early only alone: a group commits with the flush in its own statement (one statement fewer
  // per group under load; its workers are woken at the commit, after the flush).
  const relaxed = early(c) && together.length === 1;
  const created = await insertRuns(
    c,
    together.map((i) => items[i]!),
    relaxed,
  );
  const outcomes: (SubmitOutcome | Error)[] = items.map(() => undefined);
  let flushed: Error | undefined;
  if (created.some((run) => run !== undefined)) {
    if (relaxed)
      flushed = await c.flushed().then(
        () => undefined,
        (error: unknown) => (error instanceof Error ? error : new Error(String(error))),
      );
    else if (!early(c)) {
      // (Early, a server's statement notified inside.)
      try {
        c.publish?.(
          created.flatMap((run) =>
            run && run.status !== "running" ? [{ kind: "work" as const, planHash: run.planHash }] : [],
          ),
        );
      } catch {
        // Signals are hints: the workers' sweep finds the runs.
      }
    }
  }
  await Promise.all(
    together.map(async (i, k) => {
      const run = created[k];
      if (run) outcomes[i] = flushed ?? { run, created: true };
      else outcomes[i] = await settleNotInserted(c, items[i]!).catch((error: Error) => error);
    }),
  );
  // From here on the statement above has committed: nothing may throw (a caller retrying the batch
  // would submit its runs twice), so every failure is its item's outcome.
  for (const i of after) {
    outcomes[i] = await submitRuns(c, [items[i]!]).then(
      ([outcome]) => outcome,
      (error: unknown) => (error instanceof Error ? error : new Error(String(error))),
    );
  }
  return outcomes;
}

/**
 * Inserts one run through `db`, a transaction of the caller's (a schedule's firing): the run, or
 * `undefined` when the insert wrote nothing (its idempotency key or session is taken, its plan
 * unknown). Neither flushes nor publishes: see {@link publishesAfterCommit}.
 */
export async function insertRunWithin(
  c: StoreContext,
  db: Kysely<Database>,
  input: SubmitInput,
): Promise<RunRecord | undefined> {
  checkSubmission(input);
  // Raw: the submission's data-modifying CTEs (see `submitCtes`).
  const result = await grouped([submitCtes(c, { input }, 0, false)]).execute(db);
  const row = result.rows[0];
  return row ? toRun(row) : undefined;
}

/**
 * Whether the caller of {@link insertRunWithin} hands the run's `work` signal to `c.publish`
 * after its commit; otherwise the statement notified inside the transaction (delivered at commit).
 */
export const publishesAfterCommit = (c: StoreContext): boolean => c.publish !== undefined && !early(c);
