import type { JsonObject } from "@openrath/core";
import {
  canonicalJson,
  type Deployment,
  type DeploymentsV1,
  DurableError,
  type PlanRecord,
  type PlanRevision,
} from "@openrath/runtime-durable/store";
import { sql } from "kysely";
import type { StoreContext } from "./context.js";

const plans = (c: StoreContext) => c.t.plans;
const versions = (c: StoreContext) => sql.table(`${c.schema}.plan_versions`);
const deployments = (c: StoreContext) => sql.table(`${c.schema}.deployments`);

interface PlanRow {
  hash: string;
  name: string;
  version: string;
  definition: string;
}

/** See `RunStoreV1.getPlan`. */
export async function getPlan(c: StoreContext, hash: string): Promise<PlanRecord | undefined> {
  const r =
    await sql<PlanRow>`select hash, name, version, definition from ${plans(c)} where hash = ${hash}`.execute(
      c.db,
    );
  const row = r.rows[0];
  return row
    ? {
        hash: row.hash,
        name: row.name,
        version: row.version,
        definition: JSON.parse(row.definition) as JsonObject,
      }
    : undefined;
}

/**
 * See `RunStoreV1.registerPlan`: the plan and its (name, version) in one transaction, so a plan
 * refused for its version leaves nothing behind.
 */
export async function registerPlan(c: StoreContext, plan: PlanRecord): Promise<void> {
  const definition = canonicalJson(plan.definition);
  await c.db.transaction().execute(async (tx) => {
    await sql`insert into ${plans(c)} (hash, name, version, definition) values (${plan.hash}, ${plan.name}, ${plan.version}, ${definition})
      on conflict (hash) do nothing`.execute(tx);
    await sql`insert into ${versions(c)} (name, version, hash) values (${plan.name}, ${plan.version}, ${plan.hash})
      on conflict (name, version) do nothing`.execute(tx);
    const r = await sql<PlanRow & { versioned: string | null }>`
      select p.hash, p.name, p.version, p.definition,
        (select v.hash from ${versions(c)} v where v.name = ${plan.name} and v.version = ${plan.version}) as versioned
      from ${plans(c)} p where p.hash = ${plan.hash}`.execute(tx);
    const stored = r.rows[0];
    if (
      !stored ||
      stored.definition !== definition ||
      stored.name !== plan.name ||
      stored.version !== plan.version
    ) {
      throw new DurableError(
        "plan_conflict",
        `Plan hash ${plan.hash} is already registered with different content.`,
        {
          details: { hash: plan.hash, name: plan.name },
        },
      );
    }
    if (stored.versioned !== plan.hash) {
      throw new DurableError(
        "plan_conflict",
        `Workflow "${plan.name}" version "${plan.version}" is already registered as plan ${stored.versioned}, with other steps or code than plan ${plan.hash}. Give the changed workflow a new version (\`version\` of the DurableWorkflow, or defineWorkflow(name, { version })).`,
        {
          details: { name: plan.name, version: plan.version, hash: plan.hash, registered: stored.versioned },
        },
      );
    }
  });
}

interface DeploymentRow {
  name: string;
  hash: string;
  version: string;
  previous: string | null;
  deployed_at: Date | string;
}

const toDeployment = (row: DeploymentRow): Deployment => ({
  name: row.name,
  hash: row.hash,
  version: row.version,
  previous: row.previous,
  deployedAt: new Date(row.deployed_at).getTime(),
});

/** The store's {@link DeploymentsV1}. `run` is the store's guard (closed store, driver errors mapped). */
export function deploymentsOf(
  c: StoreContext,
  run: <T>(work: () => Promise<T>) => Promise<T>,
): DeploymentsV1 {
  const current = async (name: string) => {
    const r = await sql<DeploymentRow>`
      select d.name, d.hash, p.version, d.previous, d.deployed_at
      from ${deployments(c)} d join ${plans(c)} p on p.hash = d.hash where d.name = ${name}`.execute(c.db);
    return r.rows[0] ? toDeployment(r.rows[0]) : undefined;
  };
  return Object.freeze({
    specVersion: "v1" as const,
    current: (name: string) => run(() => current(name)),
    deploy: (hash: string, options: { readonly ifNewer?: boolean } = {}) =>
      run(async () => {
        // One statement: the upsert moves the pointer unless `ifNewer` finds a newer revision deployed.
        const r = await sql<{ name: string; moved: boolean }>`
          with plan as (select hash, name, created_at from ${plans(c)} where hash = ${hash}),
          up as (
            insert into ${deployments(c)} as d (name, hash, previous, deployed_at)
            select name, hash, null, now() from plan
            on conflict (name) do update set previous = d.hash, hash = excluded.hash, deployed_at = now()
            where d.hash <> excluded.hash ${
              options.ifNewer
                ? sql`and (select p.created_at from ${plans(c)} p where p.hash = d.hash) <= (select created_at from plan)`
                : sql``
            }
            returning d.name
          )
          select plan.name, exists (select 1 from up) as moved from plan`.execute(c.db);
        const row = r.rows[0];
        if (!row) {
          throw new DurableError(
            "unknown_plan",
            `No plan ${hash} is registered in the store: register it before deploying it.`,
            {
              details: { hash },
            },
          );
        }
        const deployment = await current(row.name);
        return { deployment: deployment!, moved: row.moved };
      }),
    revisions: (name: string) =>
      run(async () => {
        const r = await sql<{
          hash: string;
          name: string;
          version: string;
          created_at: Date | string;
          deployed: boolean;
        }>`
          select p.hash, p.name, p.version, p.created_at,
            exists (select 1 from ${deployments(c)} d where d.name = p.name and d.hash = p.hash) as deployed
          from ${plans(c)} p where p.name = ${name} order by p.created_at desc, p.hash limit 1000`.execute(
          c.db,
        );
        return r.rows.map(
          (row): PlanRevision => ({
            hash: row.hash,
            name: row.name,
            version: row.version,
            registeredAt: new Date(row.created_at).getTime(),
            deployed: row.deployed,
          }),
        );
      }),
  });
}
