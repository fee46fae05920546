import { randomUUID } from "node:crypto";
import {
  checkDecision,
  type DecisionInput,
  type DecisionRecord,
  DurableError,
  type Fence,
  type InterruptInput,
  type InterruptRecord,
  type JournaledInterrupt,
  type ListInterruptsQuery,
  type Page,
  type RunRecord,
} from "@openrath/runtime-durable/store";
import { sql } from "kysely";
import type { StoreContext } from "./context.js";
import { RollBack } from "./effects.js";
import { diagnose } from "./fencing.js";
import { isUuid } from "./ids.js";
import {
  afterOf,
  cursorOf,
  journalTables,
  pageLimit,
  toInterrupt,
  toJournaledInterrupt,
} from "./journal-rows.js";
import { changeRun, notIn } from "./journal-transitions.js";

type Row = Record<string, unknown>;

const SYSTEM_ACTOR = "openrath-system";
const STATUSES = ["pending", "decided", "expired"] as const;

/** See `JournalStoreV1.raiseInterrupt`. */
export async function raiseInterrupt(
  c: StoreContext,
  fence: Fence,
  input: InterruptInput,
): Promise<{ interrupt: InterruptRecord; run: RunRecord }> {
  const { interrupts, effects } = journalTables(c);
  const done = await c.db
    .transaction()
    .execute(async (tx) => {
      const inserted = await sql<Row>`
        insert into ${interrupts} (id, run_id, tenant_id, checkpoint_seq, step_id, position, fingerprint, kind, request,
          payload_schema, on_timeout, status, expires_at)
        select ${randomUUID()}, r.id, r.tenant_id, ${input.checkpointSeq}, ${input.stepId}, ${input.position}, ${input.fingerprint},
          ${input.kind}, ${JSON.stringify(input.request)}, ${input.schema ? JSON.stringify(input.schema) : null},
          ${input.onTimeout ? JSON.stringify(input.onTimeout) : null}, 'pending',
          ${input.timeoutMs === null ? sql`null::timestamptz` : sql`now() + ${input.timeoutMs} * interval '1 millisecond'`}
        from ${c.t.runs} r where r.id = ${fence.runId} and r.status = 'running' and r.fencing_token = ${fence.token}
        on conflict (run_id, checkpoint_seq, position) do nothing
        returning *`.execute(tx);
      let row = inserted.rows[0];
      if (!row) {
        const existing = await sql<Row>`select * from ${interrupts}
          where run_id = ${fence.runId} and checkpoint_seq = ${input.checkpointSeq} and position = ${input.position}`.execute(
          tx,
        );
        row = existing.rows[0];
        if (!row) throw new RollBack();
        if (row.fingerprint !== input.fingerprint || row.status !== "pending") {
          throw new DurableError(
            "journal_conflict",
            `Interrupt position ${input.position} of run ${fence.runId} (visit ${input.checkpointSeq}) already holds another ${row.status} interrupt.`,
            { details: { runId: fence.runId, position: input.position, interruptId: String(row.id) } },
          );
        }
      }
      if (input.releaseEffectId) {
        await sql`update ${effects} set status = 'prepared', updated_at = now()
          where id = ${input.releaseEffectId} and run_id = ${fence.runId} and status = 'dispatched' and fencing_token = ${fence.token}`.execute(
          tx,
        );
      }
      const run = await changeRun(tx, c, {
        runId: fence.runId,
        fence,
        to: "waiting",
        type: "run.interrupt.created",
        data: { interruptId: String(row.id), kind: input.kind, stepId: input.stepId },
      });
      if (!run) throw new RollBack();
      return { interrupt: toInterrupt(row), run };
    })
    .catch((error) => {
      if (error instanceof RollBack) return undefined;
      throw error;
    });
  if (done) return done;
  return diagnose(c, fence, "raise an interrupt in");
}

function notFound(interruptId: string, tenantId?: string): DurableError {
  return new DurableError(
    "interrupt_not_found",
    `No interrupt ${interruptId}${tenantId ? ` in tenant ${tenantId}` : ""}.`,
    { details: { interruptId } },
  );
}

function alreadyDecided(row: Row): DurableError {
  const record = toInterrupt(row);
  return new DurableError(
    "interrupt_decided",
    `Interrupt ${record.id} is ${record.status} already${record.decision ? ` (${record.decision.kind} by ${record.decision.actor})` : ""}; a decision is taken once.`,
    { details: { interruptId: record.id, status: record.status, decision: record.decision as never } },
  );
}

/** See `JournalStoreV1.decideInterrupt`. */
export async function decideInterrupt(
  c: StoreContext,
  interruptId: string,
  decision: DecisionInput,
  tenantId?: string,
): Promise<{ interrupt: InterruptRecord; run: RunRecord }> {
  if (!isUuid(interruptId)) throw notFound(interruptId, tenantId);
  const { interrupts } = journalTables(c);
  const scoped = tenantId === undefined ? sql`` : sql`and tenant_id = ${tenantId}`;
  const found = await sql<Row>`select * from ${interrupts} where id = ${interruptId} ${scoped}`.execute(c.db);
  const current = found.rows[0];
  if (!current) throw notFound(interruptId, tenantId);
  if (current.status !== "pending") throw alreadyDecided(current);
  checkDecision(decision, toInterrupt(current).schema);
  const record: DecisionRecord = {
    kind: decision.kind,
    actor: decision.actor,
    ...(decision.reason !== undefined ? { reason: decision.reason } : {}),
    ...(decision.payload !== undefined ? { payload: decision.payload } : {}),
    by: "operator",
  };
  return c.db.transaction().execute(async (tx) => {
    const locked = await sql<Row>`select * from ${interrupts} where id = ${interruptId} for update`.execute(
      tx,
    );
    const row = locked.rows[0]!;
    if (row.status !== "pending") throw alreadyDecided(row);
    const runId = String(row.run_id);
    const run = await changeRun(tx, c, {
      runId,
      from: ["waiting"],
      to: "queued",
      type: "run.interrupt.decided",
      data: { interruptId, decision: decision.kind, actor: decision.actor, by: "operator" },
    });
    if (!run) throw await notIn(tx, c, runId, ["waiting"], "queued");
    const updated =
      await sql<Row>`update ${interrupts} set status = 'decided', decision = ${JSON.stringify(record)}, decided_at = now()
      where id = ${interruptId} returning *`.execute(tx);
    return { interrupt: toInterrupt(updated.rows[0]!), run };
  });
}

/** See `JournalStoreV1.expireInterrupts`. */
export async function expireInterrupts(c: StoreContext): Promise<{ decided: number; timedOut: number }> {
  const { interrupts } = journalTables(c);
  // Every worker sweeps at each heartbeat: one indexed probe when nothing is due, no transaction.
  const due =
    await sql`select 1 from ${interrupts} where status = 'pending' and expires_at <= now() limit 1`.execute(
      c.db,
    );
  if (due.rows.length === 0) return { decided: 0, timedOut: 0 };
  return c.db.transaction().execute(async (tx) => {
    const due = await sql<Row>`select * from ${interrupts}
      where status = 'pending' and expires_at <= now()
      order by expires_at limit 100 for update skip locked`.execute(tx);
    let decided = 0;
    let timedOut = 0;
    for (const row of due.rows) {
      const id = String(row.id);
      const runId = String(row.run_id);
      const onTimeout = row.on_timeout
        ? (JSON.parse(String(row.on_timeout)) as Omit<DecisionRecord, "by" | "actor">)
        : null;
      if (onTimeout) {
        const record: DecisionRecord = {
          reason: "timed out",
          ...onTimeout,
          actor: SYSTEM_ACTOR,
          by: "timeout",
        };
        await sql`update ${interrupts} set status = 'decided', decision = ${JSON.stringify(record)}, decided_at = now() where id = ${id}`.execute(
          tx,
        );
        await changeRun(tx, c, {
          runId,
          from: ["waiting"],
          to: "queued",
          type: "run.interrupt.decided",
          data: { interruptId: id, decision: record.kind, actor: SYSTEM_ACTOR, by: "timeout" },
        });
        decided++;
      } else {
        await sql`update ${interrupts} set status = 'expired', decided_at = now() where id = ${id}`.execute(
          tx,
        );
        const ended = await changeRun(tx, c, {
          runId,
          from: ["waiting"],
          to: "timed_out",
          type: "run.interrupt.expired",
          data: { interruptId: id },
          error: {
            code: "interrupt_timeout",
            message: `Interrupt ${id} (${String(row.kind)}) expired without a decision and declared no default.`,
            stepId: String(row.step_id),
          },
        });
        if (ended) timedOut++;
      }
    }
    return { decided, timedOut };
  });
}

/** See `JournalStoreV1.getInterrupt`. */
export async function getInterrupt(
  c: StoreContext,
  interruptId: string,
  tenantId?: string,
): Promise<InterruptRecord | undefined> {
  if (!isUuid(interruptId)) return undefined;
  const { interrupts } = journalTables(c);
  const r = await sql<Row>`select * from ${interrupts} where id = ${interruptId}
    ${tenantId === undefined ? sql`` : sql`and tenant_id = ${tenantId}`}`.execute(c.db);
  return r.rows[0] ? toInterrupt(r.rows[0]) : undefined;
}

/** See `JournalStoreV1.listInterrupts`. */
export async function listInterrupts(
  c: StoreContext,
  query: ListInterruptsQuery,
): Promise<Page<InterruptRecord>> {
  const { interrupts } = journalTables(c);
  const limit = pageLimit(query.limit);
  const after = afterOf("i", query.cursor);
  const status = query.status ?? "pending";
  if (status !== "all" && !STATUSES.includes(status)) {
    throw new DurableError(
      "invalid_argument",
      `Interrupt status ${JSON.stringify(status)} is not one of ${STATUSES.join(", ")} or "all".`,
    );
  }
  if (query.runId !== undefined && !isUuid(query.runId)) return { items: [], nextCursor: null };
  const r = await sql<Row>`select * from ${interrupts}
    where tenant_id = ${query.tenantId} and seq > ${after}
    ${status === "all" ? sql`` : sql`and status = ${status}`}
    ${query.runId === undefined ? sql`` : sql`and run_id = ${query.runId}`}
    order by seq limit ${limit + 1}`.execute(c.db);
  const rows = r.rows.slice(0, limit);
  return {
    items: rows.map(toInterrupt),
    nextCursor: r.rows.length > limit ? cursorOf("i", rows[rows.length - 1]!.seq) : null,
  };
}

/** See `JournalStoreV1.stepInterrupts`. */
export async function stepInterrupts(
  c: StoreContext,
  runId: string,
  checkpointSeq: number,
): Promise<JournaledInterrupt[]> {
  if (!isUuid(runId)) return [];
  const { interrupts } = journalTables(c);
  const r =
    await sql<Row>`select * from ${interrupts} where run_id = ${runId} and checkpoint_seq = ${checkpointSeq} order by seq`.execute(
      c.db,
    );
  return r.rows.map(toJournaledInterrupt);
}
