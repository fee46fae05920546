import { randomUUID } from "node:crypto";
import { type AccessStoreV1, DurableError } from "@openrath/runtime-durable/store";
import { sql } from "kysely";
import { checkAudit, checkAuditQuery, checkToken } from "./access-inputs.js";
import { auditValues, insertAudit, toAudit, toToken } from "./audit-rows.js";
import { type StoreContext, tables } from "./context.js";
import { isUuid } from "./ids.js";

/** The most tokens `listTokens` returns. */
const MAX_TOKENS = 1000;

/**
 * The store's {@link AccessStoreV1}: tokens by the SHA-256 of their secret and the append-only
 * audit log. A change and its audit record share one transaction (ADR 0027 decision 7); a change
 * that does not happen (a revoked token revoked again, an unknown one) writes no record.
 */
export function accessStore(c: StoreContext, run: <T>(work: () => Promise<T>) => Promise<T>): AccessStoreV1 {
  return {
    specVersion: "v1",

    createToken: (input) =>
      run(async () => {
        checkToken(input);
        return c.db.transaction().execute(async (tx) => {
          const row = await tables(c, tx)
            .insertInto("tokens")
            .values({
              id: randomUUID(),
              tenant_id: input.tenantId,
              project_id: input.projectId ?? null,
              name: input.name,
              grants: [...input.grants],
              secret_hash: input.secretHash,
              expires_at: input.expiresAt == null ? null : new Date(input.expiresAt),
            })
            .onConflict((oc) => oc.column("secret_hash").doNothing())
            .returningAll()
            .executeTakeFirst();
          if (!row) {
            throw new DurableError(
              "idempotency_conflict",
              "A token with this secret hash is stored already; make a new secret for a new token.",
            );
          }
          if (input.audit) await insertAudit(c, tx, input.audit, String(row.id));
          return toToken(row);
        });
      }),

    findToken: (secretHash) =>
      run(async () => {
        if (typeof secretHash !== "string") return undefined;
        const row = await tables(c)
          .selectFrom("tokens")
          .selectAll()
          .where("secret_hash", "=", secretHash)
          .executeTakeFirst();
        return row ? toToken(row) : undefined;
      }),

    listTokens: (tenantId) =>
      run(async () => {
        const rows = await tables(c)
          .selectFrom("tokens")
          .selectAll()
          .where("tenant_id", "=", tenantId)
          .orderBy("created_at", "desc")
          .orderBy("id", "desc")
          .limit(MAX_TOKENS)
          .execute();
        return rows.map(toToken);
      }),

    revokeToken: (tenantId, tokenId, audit) =>
      run(async () => {
        if (audit !== undefined) checkAudit(audit);
        if (!isUuid(tokenId)) return undefined;
        return c.db.transaction().execute(async (tx) => {
          const revoked = await tables(c, tx)
            .updateTable("tokens")
            .set({ revoked_at: sql`now()` })
            .where("id", "=", tokenId)
            .where("tenant_id", "=", tenantId)
            .where("revoked_at", "is", null)
            .returningAll()
            .executeTakeFirst();
          if (revoked) {
            if (audit) await insertAudit(c, tx, audit, tokenId);
            return toToken(revoked);
          }
          // Revoked already (its first time kept), or none of the tenant's.
          const row = await tables(c, tx)
            .selectFrom("tokens")
            .selectAll()
            .where("id", "=", tokenId)
            .where("tenant_id", "=", tenantId)
            .executeTakeFirst();
          return row ? toToken(row) : undefined;
        });
      }),

    appendAudit: (records) =>
      run(async () => {
        for (const record of records) checkAudit(record);
        if (records.length === 0) return;
        await tables(c)
          .insertInto("audit")
          .values(records.map((record) => auditValues(record)))
          .execute();
      }),

    listAudit: (query) =>
      run(async () => {
        checkAuditQuery(query);
        const limit = query.limit ?? 100;
        const { action, outcome } = query;
        const found = await tables(c)
          .selectFrom("audit")
          .selectAll()
          .where("tenant_id", "=", query.tenantId)
          .where("id", ">", query.cursor ?? 0)
          .$if(action !== undefined, (q) => q.where("action", "=", action!))
          .$if(outcome !== undefined, (q) => q.where("outcome", "=", outcome!))
          .orderBy("id")
          .limit(limit + 1)
          .execute();
        const rows = found.slice(0, limit);
        return {
          items: rows.map(toAudit),
          nextCursor: found.length > limit ? String(rows[rows.length - 1]!.id) : null,
        };
      }),
  };
}
