import { randomUUID } from "node:crypto";
import type { JsonObject } from "@openrath/core";
import {
  DurableError,
  type MessageQueueV1,
  type QueuedMessage,
  type RunErrorInfo,
} from "@openrath/runtime-durable/store";
import { sql } from "kysely";
import { checkAudit } from "./access-inputs.js";
import { insertAudit } from "./audit-rows.js";
import { type StoreContext, tables, toMs } from "./context.js";
import { isUuid } from "./ids.js";

type Row = Record<string, unknown>;

const json = <T>(value: unknown): T => (typeof value === "string" ? JSON.parse(value) : value) as T;

function toMessage(row: Row): QueuedMessage {
  return {
    id: String(row.id),
    tenantId: String(row.tenant_id),
    projectId: (row.project_id as string | null) ?? null,
    sessionId: String(row.session_id),
    workflow: String(row.workflow),
    input: String(row.input),
    metadata: json<JsonObject>(row.metadata ?? {}),
    priority: Number(row.priority),
    status: row.status as QueuedMessage["status"],
    runId: (row.run_id as string | null) ?? null,
    error: row.error == null ? null : json<RunErrorInfo>(row.error),
    createdAt: toMs(row.created_at) ?? 0,
  };
}

/** The store's {@link MessageQueueV1}. */
export function messageQueueStore(
  c: StoreContext,
  run: <T>(work: () => Promise<T>) => Promise<T>,
): MessageQueueV1 {
  return {
    specVersion: "v1",

    enqueue: (input) =>
      run(async () => {
        for (const [name, value] of [
          ["sessionId", input.sessionId],
          ["workflow", input.workflow],
        ] as const)
          if (typeof value !== "string" || value === "" || value.length > 256)
            throw new DurableError(
              "invalid_argument",
              `A queued message's ${name} is a string of 1 to 256 characters.`,
            );
        if (typeof input.input !== "string")
          throw new DurableError("invalid_argument", "A queued message's input is a string.");
        if (input.audit !== undefined) checkAudit(input.audit);
        return c.db.transaction().execute(async (tx) => {
          const row = await tables(c, tx)
            .insertInto("message_queue")
            .values({
              id: randomUUID(),
              tenant_id: input.tenantId,
              project_id: input.projectId ?? null,
              session_id: input.sessionId,
              workflow: input.workflow,
              input: input.input,
              metadata: JSON.stringify(input.metadata ?? {}),
              priority: input.priority ?? 0,
            })
            .returningAll()
            .executeTakeFirstOrThrow();
          if (input.audit) await insertAudit(c, tx, input.audit, String(row.id));
          return toMessage(row);
        });
      }),

    get: (tenantId, messageId) =>
      run(async () => {
        if (!isUuid(messageId)) return undefined;
        const row = await tables(c)
          .selectFrom("message_queue")
          .selectAll()
          .where("id", "=", messageId)
          .where("tenant_id", "=", tenantId)
          .executeTakeFirst();
        return row ? toMessage(row) : undefined;
      }),

    takeReady: (limit, leaseMs) =>
      run(async () => {
        const count = Math.min(Math.max(Math.floor(limit), 1), 500);
        const lease = Math.max(1, Math.floor(leaseMs));
        const queue = sql.table(`${c.schema}.message_queue`);
        // Raw: the oldest pending message of each session without an active run, picked once
        // (materialized) with row locks, and hidden for the lease.
        const result = await sql<Row>`
          with ready as materialized (
            select m.id from ${queue} m
            where m.status = 'pending' and m.visible_at <= now()
              and not exists (select 1 from ${queue} o where o.status = 'pending' and o.tenant_id = m.tenant_id
                and o.session_id = m.session_id and (o.created_at, o.id) < (m.created_at, m.id))
              and not exists (select 1 from ${c.t.runs} r where r.tenant_id = m.tenant_id and r.session_id = m.session_id
                and r.status in ('queued', 'running', 'waiting', 'needs_review'))
            order by m.created_at, m.id limit ${count}
            for update of m skip locked
          )
          update ${queue} q set visible_at = now() + ${lease} * interval '1 millisecond'
          from ready where q.id = ready.id
          returning q.*`.execute(c.db);
        return result.rows.map(toMessage).sort((a, b) => a.createdAt - b.createdAt);
      }),

    complete: (messageId, outcome) =>
      run(async () => {
        if (!isUuid(messageId)) return undefined;
        const row = await tables(c)
          .updateTable("message_queue")
          .set(
            "runId" in outcome
              ? { status: "submitted", run_id: outcome.runId }
              : { status: "failed", error: JSON.stringify(outcome.error) },
          )
          .where("id", "=", messageId)
          .where("status", "=", "pending")
          .returningAll()
          .executeTakeFirst();
        return row ? toMessage(row) : undefined;
      }),

    release: (messageId) =>
      run(async () => {
        if (!isUuid(messageId)) return;
        await tables(c)
          .updateTable("message_queue")
          .set({ visible_at: sql`now()` })
          .where("id", "=", messageId)
          .where("status", "=", "pending")
          .execute();
      }),
  };
}
