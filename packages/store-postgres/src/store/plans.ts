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
import { type StoreContext, tables } from "./context.js";

const plans = (c: StoreContext) => c.t.plans;
const deployments = (c: StoreContext) => sql.table(`${c.schema}.deployments`);

/** See `RunStoreV1.getPlan`. */
export async function getPlan(c: StoreContext, hash: string): Promise<PlanRecord | undefined> {
  const row = await tables(c)
    .selectFrom("plans")
    .select(["hash", "name", "version", "definition"])
    .where("hash", "=", hash)
    .executeTakeFirst();
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
    const t = tables(c, tx);
    await t
      .insertInto("plans")
      .values({ hash: plan.hash, name: plan.name, version: plan.version, definition })
      .onConflict((oc) => oc.column("hash").doNothing())
      .execute();
    await t
      .insertInto("plan_versions")
      .values({ name: plan.name, version: plan.version, hash: plan.hash })
      .onConflict((oc) => oc.columns(["name", "version"]).doNothing())
      .execute();
    const stored = await t
      .selectFrom("plans as p")
      .select(["p.hash", "p.name", "p.version", "p.definition"])
      .select((eb) =>
        eb
          .selectFrom("plan_versions as v")
          .select("v.hash")
          .where("v.name", "=", plan.name)
          .where("v.version", "=", plan.version)
          .as("versioned"),
      )
      .where("p.hash", "=", plan.hash)
      .executeTakeFirst();
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
    const row = await tables(c)
      .selectFrom("deployments as d")
      .innerJoin("plans as p", "p.hash", "d.hash")
      .select(["d.name", "d.hash", "p.version", "d.previous", "d.deployed_at"])
      .where("d.name", "=", name)
      .executeTakeFirst();
    return row ? toDeployment(row) : undefined;
  };
  return Object.freeze({
    specVersion: "v1" as const,
    current: (name: string) => run(() => current(name)),
    deploy: (hash: string, options: { readonly ifNewer?: boolean } = {}) =>
      run(async () => {
        // Raw: a conditional upsert inside a CTE whose `exists` the outer select reads.
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
        const rows = await tables(c)
          .selectFrom("plans as p")
          .select(["p.hash", "p.name", "p.version", "p.created_at"])
          .select((eb) =>
            eb
              .exists(
                eb
                  .selectFrom("deployments as d")
                  .select(eb.lit(1).as("one"))
                  .whereRef("d.name", "=", "p.name")
                  .whereRef("d.hash", "=", "p.hash"),
              )
              .$castTo<boolean>()
              .as("deployed"),
          )
          .where("p.name", "=", name)
          .orderBy("p.created_at", "desc")
          .orderBy("p.hash")
          .limit(1000)
          .execute();
        return rows.map(
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
