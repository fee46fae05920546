import { OFFLOADED_KEY, offloadedArtifacts } from "@openrath/runtime-durable/store";
import { type StoreContext, tables } from "./context.js";

/**
 * The digests of `tenantId`'s artifacts that stored chunks refer to: the claim-check stubs
 * `withArtifactOffload` writes (what checkpoints and retained runs keep). Checkpoints record them in
 * `checkpoint_artifacts` when written; chunk rows of the first format are scanned for stubs, which
 * are small because their large strings live in the artifact store.
 */
export async function referencedArtifacts(c: StoreContext, tenantId: string): Promise<ReadonlySet<string>> {
  const digests = new Set<string>();
  const recorded = await tables(c)
    .selectFrom("checkpoint_artifacts")
    .select("digest")
    .distinct()
    .where("tenant_id", "=", tenantId)
    .execute();
  for (const row of recorded) digests.add(row.digest);
  const pattern = `%${JSON.stringify(OFFLOADED_KEY)}%`;
  const rows = await tables(c)
    .selectFrom("chunks")
    .select("body")
    .where("tenant_id", "=", tenantId)
    .where("body", "like", pattern)
    .execute();
  for (const row of rows) {
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
