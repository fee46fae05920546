import { OFFLOADED_KEY, offloadedArtifacts } from "@openrath/runtime-durable/store";
import { sql } from "kysely";
import type { StoreContext } from "./context.js";

/**
 * The digests of `tenantId`'s artifacts that stored chunks refer to: the claim-check stubs
 * `withArtifactOffload` writes (what checkpoints and retained runs keep). Checkpoints record them in
 * `checkpoint_artifacts` when written; chunk rows of the first format are scanned for stubs, which
 * are small because their large strings live in the artifact store.
 */
export async function referencedArtifacts(c: StoreContext, tenantId: string): Promise<ReadonlySet<string>> {
  const digests = new Set<string>();
  const recorded = await sql<{ digest: string }>`select distinct digest from ${c.t.artifacts}
    where tenant_id = ${tenantId}`.execute(c.db);
  for (const row of recorded.rows) digests.add(row.digest);
  const pattern = `%${JSON.stringify(OFFLOADED_KEY)}%`;
  const rows = await sql<{ body: string }>`select body from ${c.t.chunks}
    where tenant_id = ${tenantId} and body like ${pattern}`.execute(c.db);
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
