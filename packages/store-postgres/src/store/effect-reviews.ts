import {
  type Audited,
  checkResolution,
  DurableError,
  EFFECT_STATUSES,
  type EffectRecord,
  type EffectResolutionInput,
  type ListEffectsQuery,
  type Page,
  type RunRecord,
  resolutionOutcome,
} from "@openrath/runtime-durable/store";
import { sql } from "kysely";
import { checkAudit } from "./access-inputs.js";
import { insertAudit } from "./audit-rows.js";
import { type StoreContext, tables } from "./context.js";
import { isUuid } from "./ids.js";
import { afterOf, cursorOf, pageLimit, toEffect } from "./journal-rows.js";
import { changeRun } from "./journal-transitions.js";

/** The effect ledger as operators see it: reading effects, the review inbox and resolutions. */

/** See `JournalStoreV1.getEffect`. */
export async function getEffect(
  c: StoreContext,
  effectId: string,
  tenantId?: string,
): Promise<EffectRecord | undefined> {
  if (!isUuid(effectId)) return undefined;
  const row = await tables(c)
    .selectFrom("effects")
    .selectAll()
    .where("id", "=", effectId)
    .$if(tenantId !== undefined, (q) => q.where("tenant_id", "=", tenantId!))
    .executeTakeFirst();
  return row ? toEffect(row) : undefined;
}

/** See `JournalStoreV1.listEffects`. */
export async function listEffects(c: StoreContext, query: ListEffectsQuery): Promise<Page<EffectRecord>> {
  const limit = pageLimit(query.limit);
  const after = afterOf("e", query.cursor);
  const statuses =
    query.status === undefined
      ? ["needs_review"]
      : Array.isArray(query.status)
        ? query.status
        : [query.status];
  for (const s of statuses) {
    if (!EFFECT_STATUSES.includes(s)) {
      throw new DurableError(
        "invalid_argument",
        `Effect status ${JSON.stringify(s)} is not one of ${EFFECT_STATUSES.join(", ")}.`,
      );
    }
  }
  if (query.runId !== undefined && !isUuid(query.runId)) return { items: [], nextCursor: null };
  const { runId, projectId } = query;
  // The statuses as literals: the review inbox is the partial index `effects_review`.
  const found = await tables(c)
    .selectFrom("effects")
    .selectAll()
    .where("tenant_id", "=", query.tenantId)
    .where("seq", ">", after)
    .where(
      "status",
      "in",
      statuses.map((s) => sql.lit(s)),
    )
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
    items: rows.map(toEffect),
    nextCursor: found.length > limit ? cursorOf("e", rows[rows.length - 1]!.seq) : null,
  };
}

/** See `JournalStoreV1.resolveEffect`. */
export async function resolveEffect(
  c: StoreContext,
  effectId: string,
  resolution: EffectResolutionInput,
  tenantId?: string,
  audited: Audited = {},
): Promise<{ effect: EffectRecord; run: RunRecord }> {
  checkResolution(resolution);
  const { audit } = audited;
  if (audit !== undefined) checkAudit(audit);
  const notFound = () =>
    new DurableError(
      "effect_not_found",
      `No effect ${effectId}${tenantId ? ` in tenant ${tenantId}` : ""}.`,
      {
        details: { effectId },
      },
    );
  if (!isUuid(effectId)) throw notFound();
  const outcome = resolutionOutcome(resolution);
  return c.db.transaction().execute(async (tx) => {
    const row = await tables(c, tx)
      .selectFrom("effects")
      .selectAll()
      .where("id", "=", effectId)
      .$if(tenantId !== undefined, (q) => q.where("tenant_id", "=", tenantId!))
      .forUpdate()
      .executeTakeFirst();
    if (!row) throw notFound();
    const before = toEffect(row);
    if (before.status !== "needs_review") {
      throw new DurableError(
        "effect_not_under_review",
        `Effect ${effectId} (${before.tool}) is ${before.status}, not under review; only effects under review are resolved.`,
        { details: { effectId, status: before.status } },
      );
    }
    const status = resolution.kind === "retry" ? "prepared" : resolution.kind;
    const updated = await tables(c, tx)
      .updateTable("effects")
      .set({
        status,
        outcome: outcome ? JSON.stringify(outcome) : null,
        resolution: sql<string>`(${JSON.stringify(resolution)}::jsonb || jsonb_build_object('at', (extract(epoch from now()) * 1000)::bigint))::text`,
        updated_at: sql`now()`,
      })
      .where("id", "=", effectId)
      .returningAll()
      .executeTakeFirstOrThrow();
    const left = await tables(c, tx)
      .selectFrom("effects")
      .select((eb) => eb.fn.countAll().as("n"))
      .where("run_id", "=", before.runId)
      .where("status", "=", sql.lit("needs_review"))
      .executeTakeFirst();
    const remaining = Number(left?.n ?? 0);
    const data = {
      effectId,
      tool: before.tool,
      kind: resolution.kind,
      actor: resolution.actor,
      ...(resolution.reason !== undefined ? { reason: resolution.reason } : {}),
      remaining,
    };
    const resumed =
      remaining === 0
        ? await changeRun(tx, c, {
            runId: before.runId,
            from: ["needs_review"],
            to: "queued",
            type: "run.effect.resolved",
            data,
          })
        : undefined;
    const run =
      resumed ?? (await changeRun(tx, c, { runId: before.runId, type: "run.effect.resolved", data }));
    if (!run)
      throw new DurableError("run_not_found", `No run ${before.runId}.`, {
        details: { runId: before.runId },
      });
    if (audit) await insertAudit(c, tx, audit, effectId);
    return { effect: toEffect(updated), run };
  });
}
