import { randomUUID } from "node:crypto";
import {
  type Audited,
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
import { checkAudit } from "./access-inputs.js";
import { insertAudit } from "./audit-rows.js";
import { type StoreContext, tables } from "./context.js";
import { RollBack } from "./effects.js";
import { diagnose } from "./fencing.js";
import { isUuid } from "./ids.js";
import { afterOf, cursorOf, pageLimit, toInterrupt, toJournaledInterrupt } from "./journal-rows.js";
import { changeRun, notIn } from "./journal-transitions.js";

type Row = Record<string, unknown>;

const SYSTEM_ACTOR = "openrath-system";

/** The `interrupts` columns a raised interrupt fills in (the others have defaults). */
const INTERRUPT_COLUMNS = [
  "id",
  "run_id",
  "tenant_id",
  "checkpoint_seq",
  "step_id",
  "position",
  "fingerprint",
  "kind",
  "request",
  "payload_schema",
  "on_timeout",
  "status",
  "expires_at",
] as const;
const STATUSES = ["pending", "decided", "expired"] as const;

/** See `JournalStoreV1.raiseInterrupt`. */
export async function raiseInterrupt(
  c: StoreContext,
  fence: Fence,
  input: InterruptInput,
): Promise<{ interrupt: InterruptRecord; run: RunRecord }> {
  const done = await c.db
    .transaction()
    .execute(async (tx) => {
      let row: Row | undefined = await tables(c, tx)
        .insertInto("interrupts")
        .columns(INTERRUPT_COLUMNS)
        .expression((eb) =>
          eb
            .selectFrom("runs as r")
            .select([
              sql.val(randomUUID()).as("id"),
              "r.id as run_id",
              "r.tenant_id",
              sql.val(input.checkpointSeq).as("checkpoint_seq"),
              sql.val(input.stepId).as("step_id"),
              sql.val(input.position).as("position"),
              sql.val(input.fingerprint).as("fingerprint"),
              sql.val(input.kind).as("kind"),
              sql.val(JSON.stringify(input.request)).as("request"),
              sql.val(input.schema ? JSON.stringify(input.schema) : null).as("payload_schema"),
              sql.val(input.onTimeout ? JSON.stringify(input.onTimeout) : null).as("on_timeout"),
              sql.lit("pending").as("status"),
              (input.timeoutMs === null
                ? sql`null::timestamptz`
                : sql`now() + ${input.timeoutMs} * interval '1 millisecond'`
              ).as("expires_at"),
            ])
            .where("r.id", "=", fence.runId)
            .where("r.status", "=", sql.lit("running"))
            .where("r.fencing_token", "=", fence.token),
        )
        .onConflict((oc) => oc.columns(["run_id", "checkpoint_seq", "position"]).doNothing())
        .returningAll()
        .executeTakeFirst();
      if (!row) {
        row = await tables(c, tx)
          .selectFrom("interrupts")
          .selectAll()
          .where("run_id", "=", fence.runId)
          .where("checkpoint_seq", "=", input.checkpointSeq)
          .where("position", "=", input.position)
          .executeTakeFirst();
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
        await tables(c, tx)
          .updateTable("effects")
          .set({ status: sql.lit("prepared"), updated_at: sql`now()` })
          .where("id", "=", input.releaseEffectId)
          .where("run_id", "=", fence.runId)
          .where("status", "=", sql.lit("dispatched"))
          .where("fencing_token", "=", fence.token)
          .execute();
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
  audited: Audited = {},
): Promise<{ interrupt: InterruptRecord; run: RunRecord }> {
  const { audit } = audited;
  if (audit !== undefined) checkAudit(audit);
  if (!isUuid(interruptId)) throw notFound(interruptId, tenantId);
  const current = await tables(c)
    .selectFrom("interrupts")
    .selectAll()
    .where("id", "=", interruptId)
    .$if(tenantId !== undefined, (q) => q.where("tenant_id", "=", tenantId!))
    .executeTakeFirst();
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
    const row = await tables(c, tx)
      .selectFrom("interrupts")
      .selectAll()
      .where("id", "=", interruptId)
      .forUpdate()
      .executeTakeFirstOrThrow();
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
    const updated = await tables(c, tx)
      .updateTable("interrupts")
      .set({ status: sql.lit("decided"), decision: JSON.stringify(record), decided_at: sql`now()` })
      .where("id", "=", interruptId)
      .returningAll()
      .executeTakeFirstOrThrow();
    if (audit) await insertAudit(c, tx, audit, interruptId);
    return { interrupt: toInterrupt(updated), run };
  });
}

/** See `JournalStoreV1.expireInterrupts`. */
export async function expireInterrupts(c: StoreContext): Promise<{ decided: number; timedOut: number }> {
  // Every worker sweeps at each heartbeat: one indexed probe when nothing is due, no transaction.
  // Literals, no parameters: the partial index `interrupts_expiry` serves it, and it is not prepared.
  const due = await tables(c)
    .selectFrom("interrupts")
    .select(sql.lit(1).as("due"))
    .where("status", "=", sql.lit("pending"))
    .where("expires_at", "<=", sql<Date>`now()`)
    .limit(sql.lit(1))
    .executeTakeFirst();
  if (!due) return { decided: 0, timedOut: 0 };
  return c.db.transaction().execute(async (tx) => {
    const rows = await tables(c, tx)
      .selectFrom("interrupts")
      .selectAll()
      .where("status", "=", sql.lit("pending"))
      .where("expires_at", "<=", sql<Date>`now()`)
      .orderBy("expires_at")
      .limit(100)
      .forUpdate()
      .skipLocked()
      .execute();
    let decided = 0;
    let timedOut = 0;
    for (const row of rows) {
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
        await tables(c, tx)
          .updateTable("interrupts")
          .set({ status: sql.lit("decided"), decision: JSON.stringify(record), decided_at: sql`now()` })
          .where("id", "=", id)
          .execute();
        await changeRun(tx, c, {
          runId,
          from: ["waiting"],
          to: "queued",
          type: "run.interrupt.decided",
          data: { interruptId: id, decision: record.kind, actor: SYSTEM_ACTOR, by: "timeout" },
        });
        decided++;
      } else {
        await tables(c, tx)
          .updateTable("interrupts")
          .set({ status: sql.lit("expired"), decided_at: sql`now()` })
          .where("id", "=", id)
          .execute();
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
  const row = await tables(c)
    .selectFrom("interrupts")
    .selectAll()
    .where("id", "=", interruptId)
    .$if(tenantId !== undefined, (q) => q.where("tenant_id", "=", tenantId!))
    .executeTakeFirst();
  return row ? toInterrupt(row) : undefined;
}

/** See `JournalStoreV1.listInterrupts`. */
export async function listInterrupts(
  c: StoreContext,
  query: ListInterruptsQuery,
): Promise<Page<InterruptRecord>> {
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
  const { runId, projectId } = query;
  const found = await tables(c)
    .selectFrom("interrupts")
    .selectAll()
    .where("tenant_id", "=", query.tenantId)
    .where("seq", ">", after)
    .$if(status !== "all", (q) => q.where("status", "=", status as InterruptRecord["status"]))
    .$if(runId !== undefined, (q) => q.where("run_id", "=", runId!))
    .$if(projectId !== undefined, (q) =>
      q.where("run_id", "in", (eb) =>
        eb
          .selectFrom("runs")
          .select("id")
          .where("tenant_id", "=", query.tenantId)
          .where("project_id", "=", projectId!),
      ),
    )
    .orderBy("seq")
    .limit(limit + 1)
    .execute();
  const rows = found.slice(0, limit);
  return {
    items: rows.map(toInterrupt),
    nextCursor: found.length > limit ? cursorOf("i", rows[rows.length - 1]!.seq) : null,
  };
}

/** See `JournalStoreV1.stepInterrupts`. */
export async function stepInterrupts(
  c: StoreContext,
  runId: string,
  checkpointSeq: number,
): Promise<JournaledInterrupt[]> {
  if (!isUuid(runId)) return [];
  const rows = await tables(c)
    .selectFrom("interrupts")
    .selectAll()
    .where("run_id", "=", runId)
    .where("checkpoint_seq", "=", checkpointSeq)
    .orderBy("seq")
    .execute();
  return rows.map(toJournaledInterrupt);
}
