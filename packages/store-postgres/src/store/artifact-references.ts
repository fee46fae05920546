import { OFFLOADED_KEY, offloadedArtifacts } from "@openrath/runtime-durable";
import { sql } from "kysely";
import type { StoreContext } from "./context.js";

/**
 * The digests of `tenantId`'s artifacts that chunk rows refer to: the claim-check stubs
 * `withArtifactOffload` writes (what checkpoints and retained runs keep). A scan of the tenant's
 * stub rows, which are small because their large strings live in the artifact store.
 */
export async function referencedArtifacts(c: StoreContext, tenantId: string): Promise<ReadonlySet<string>> {
  const pattern = `%${JSON.stringify(OFFLOADED_KEY)}%`;
  const rows = await sql<{ body: string }>`select body from ${c.t.chunks}
    where tenant_id = ${tenantId} and body like ${pattern}`.execute(c.db);
  const digests = new Set<string>();
  for (const row of rows.rows) {
    let body: unknown;
    try {
      body = JSON.parse(row.body);
    } catch {
      continue;
    }
    for (const ref of offloadedArtifacts(body)) if (ref.tenant === tenantId) digests.add(ref.digest);
  }
  return digests;
}
