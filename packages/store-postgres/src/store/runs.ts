import type {
  Claim,
  ClaimList,
  ClaimRequest,
  Fence,
  HeartbeatResult,
  ListRunsQuery,
  RunRecord,
  RunStatus,
} from "@openrath/runtime-durable/store";
import { sql } from "kysely";
import { type ChainRow, chainCte, decodeChain } from "./checkpoints.js";
import {
  RUN_COLUMN_NAMES,
  type RunRow,
  runColumns,
  type StoreContext,
  tables,
  toMs,
  toRun,
} from "./context.js";
import { nextToken } from "./fencing.js";
import { isUuid } from "./ids.js";

/** See `RunStoreV1.getRun`. */
export async function getRun(
  c: StoreContext,
  runId: string,
  tenantId?: string,
): Promise<RunRecord | undefined> {
  if (!isUuid(runId)) return undefined;
  const row = await tables(c)
    .selectFrom("runs")
    .select(RUN_COLUMN_NAMES)
    .where("id", "=", runId)
    .executeTakeFirst();
  if (!row || (tenantId !== undefined && row.tenant_id !== tenantId)) return undefined;
  return toRun(row);
}

/** See `RunStoreV1.listRuns`. */
export async function listRuns(c: StoreContext, query: ListRunsQuery): Promise<RunRecord[]> {
  const limit = Math.min(Math.max(query.limit ?? 100, 1), 500);
  const statuses =
    query.status === undefined ? null : Array.isArray(query.status) ? [...query.status] : [query.status];
  const after = query.after !== undefined && isUuid(query.after) ? query.after : null;
  const { sessionId, planHash, projectId } = query;
  const descending = query.order === "desc";
  const rows = await tables(c)
    .selectFrom("runs")
    .select(RUN_COLUMN_NAMES)
    .where("tenant_id", "=", query.tenantId)
    .$if(statuses !== null, (q) => q.where("status", "=", sql<string>`any(${statuses}::text[])`))
    .$if(sessionId !== undefined, (q) => q.where("session_id", "=", sessionId!))
    .$if(planHash !== undefined, (q) => q.where("plan_hash", "=", planHash!))
    // The partial index `runs_project` serves it (`=` implies `project_id is not null`).
    .$if(projectId !== undefined, (q) => q.where("project_id", "=", projectId!))
    .$if(after !== null, (q) => q.where("id", descending ? "<" : ">", sql<string>`${after}::uuid`))
    .orderBy("id", descending ? "desc" : "asc")
    .limit(limit)
    .execute();
  return rows.map(toRun);
}

/**
 * Attaches `nextAt` and `drained` to a claim list as non-enumerable properties (equality checks see
 * a plain array).
 */
function withNextAt(claims: Claim[], nextAt: number | null, drained = false): ClaimList {
  return Object.defineProperties(claims, {
    nextAt: { value: nextAt, enumerable: false },
    drained: { value: drained, enumerable: false },
  }) as ClaimList;
}

function claimsOf(rows: RunRow[], workerId: string): Claim[] {
  return rows.map((row) => {
    const run = toRun(row);
    return {
      run,
      fence: { runId: run.id, token: run.fencingToken, workerId },
      leaseExpiresAt: run.leaseExpiresAt ?? 0,
    };
  });
}

/**
 * The column that turns `synchronous_commit` off for a claim's own transaction when step commits
 * are relaxed (ADR 0018, decisions 1 and 2): a lost claim is harmless once its
 * token cannot be issued again ({@link nextToken}); empty under `stepDurability: "strict"` and on
 * PGlite.
 */
function relaxedClaim(c: StoreContext) {
  return c.relaxedSteps ? sql`, set_config('synchronous_commit', 'off', true) as relaxed` : sql``;
}

/** A chain row as the claim statement returns it (JSON: the body in base64). */
interface ChainJson extends Omit<ChainRow, "body"> {
  readonly body: string;
  readonly tag: string;
}

/**
 * The `chain` CTE of a claim on a server: the checkpoint chains of the claimed runs that are fresh
 * (at checkpoint 0), tagged with their run, so the worker starts them without reading them.
 */
function freshChains(c: StoreContext) {
  return chainCte(
    c,
    sql`from upd u join ${c.t.checkpoints} k on k.id = u.checkpoint_id where u.checkpoint_seq = 0`,
    sql`u.tenant_id`,
    sql`u.id`,
  );
}

/**
 * The claims, each fresh one with its checkpoint when the statement brought its chain. A chain
 * that does not decode is left out: the worker reads the checkpoint and reports the corruption.
 */
async function withCheckpoints(
  c: StoreContext,
  claims: Claim[],
  chains: ChainJson[] | string | null | undefined,
): Promise<Claim[]> {
  const rows = (typeof chains === "string" ? JSON.parse(chains) : (chains ?? [])) as ChainJson[];
  if (rows.length === 0) return claims;
  const byRun = new Map<string, ChainRow[]>();
  for (const row of rows) {
    const list = byRun.get(row.tag) ?? [];
    list.push({ ...row, body: Buffer.from(row.body, "base64") });
    byRun.set(row.tag, list);
  }
  const out: Claim[] = [];
  for (const claim of claims) {
    const chain = byRun.get(claim.run.id);
    const checkpoint = chain ? (await decodeChain(c, chain).catch(() => undefined))?.checkpoint : undefined;
    out.push(checkpoint ? { ...claim, checkpoint } : claim);
  }
  return out;
}

/**
 * The claimable runs of uncapped tenants: queued, of these plans, due, highest priority then
 * oldest, rows other claimers hold skipped. The order matches the partial index `runs_claim`.
 */
export function claimCandidates(c: StoreContext, hashes: readonly string[], limit: number) {
  // Raw: `for update … skip locked`, and the text must stay the one the `runs_claim` plan test explains.
  return sql`select r.id from ${c.t.runs} r
    where r.status = 'queued' and r.plan_hash = any(${[...hashes]}::text[]) and r.not_before <= now()
      and not exists (select 1 from ${c.t.limits} l where l.tenant_id = r.tenant_id)
    order by r.priority desc, r.queued_at, r.id
    limit ${limit}
    for update of r skip locked`;
}

/**
 * See `RunStoreV1.claim`. Uncapped tenants are claimed in one statement; tenants with a running
 * cap go through a transaction that takes a per-tenant advisory lock and counts, so the cap is exact.
 */
export async function claimRuns(
  c: StoreContext,
  request: ClaimRequest,
): Promise<Claim[] & { nextAt?: number | null }> {
  const limit = Math.max(1, request.limit ?? 1);
  const hashes = [...request.planHashes];
  if (hashes.length === 0) return withNextAt([], null);
  const { runs, events, limits } = c.t;
  const lease = request.leaseMs;
  // Raw: one statement of data-modifying CTEs (claim, its events, recursive chains) the builder cannot say.
  const result = await sql<{
    claimed: RunRow[] | string | null;
    chains?: ChainJson[] | string | null;
    has_limits: boolean;
    next_at: unknown;
    more: boolean;
  }>`
    with ${c.multiProcess ? sql`recursive ` : sql``}cand as (${claimCandidates(c, hashes, limit)}),
    upd as (
      update ${runs} r set status = 'running', version = r.version + 1, fencing_token = ${nextToken()},
        lease_holder = ${request.workerId}, lease_expires_at = now() + ${lease} * interval '1 millisecond',
        event_seq = r.event_seq + 1, updated_at = now()
      from cand where r.id = cand.id
      returning ${runColumns("r")}
    ),
    ev as (
      insert into ${events} (run_id, seq, type, data)
      select id, event_seq, 'run.claimed', json_build_object('workerId', lease_holder, 'fencingToken', fencing_token, 'attempt', attempt, 'from', 'queued', 'to', 'running')::text
      from upd
    )${
      c.multiProcess
        ? sql`,
    ${freshChains(c)}`
        : sql``
    }
    select (select coalesce(json_agg(upd), '[]'::json) from upd) as claimed${relaxedClaim(c)}${
      c.multiProcess
        ? sql`,
      (select coalesce(json_agg(json_build_object('id', id, 'run_id', run_id, 'tenant', tenant, 'seq', seq, 'base_id', base_id,
        'created_at', created_at, 'body', encode(body, 'base64'), 'step_id', step_id, 'next_step', next_step, 'tag', tag) order by tag, n desc), '[]'::json) from chain) as chains`
        : sql``
    },
      exists (select 1 from ${limits}) as has_limits,
      exists (select 1 from ${runs} q where q.status = 'queued' and q.plan_hash = any(${hashes}::text[]) and q.not_before <= now()
        and q.id not in (select id from cand)) as more,
      (select min(not_before) from ${runs} where status = 'queued' and plan_hash = any(${hashes}::text[]) and not_before > now()) as next_at`.execute(
    c.db,
  );
  const row = result.rows[0]!;
  const claimed = (
    typeof row.claimed === "string" ? JSON.parse(row.claimed) : (row.claimed ?? [])
  ) as RunRow[];
  const out = await withCheckpoints(c, claimsOf(claimed, request.workerId), row.chains);
  if (row.has_limits && out.length < limit) out.push(...(await claimCapped(c, request, limit - out.length)));
  // Rows another claimer holds count as more: a later claim may find them requeued.
  return withNextAt(out, toMs(row.next_at), !row.has_limits && !row.more);
}

async function claimCapped(c: StoreContext, request: ClaimRequest, limit: number): Promise<Claim[]> {
  const { runs, events, limits } = c.t;
  const hashes = [...request.planHashes];
  return c.db.transaction().execute(async (tx) => {
    // Raw: `for update of r skip locked`.
    const candidates = await sql<{ id: string; tenant_id: string; max_running: number }>`
      select r.id, r.tenant_id, l.max_running from ${runs} r join ${limits} l on l.tenant_id = r.tenant_id
      where r.status = 'queued' and r.plan_hash = any(${hashes}::text[]) and r.not_before <= now()
        and l.max_running > (select count(*) from ${runs} x where x.tenant_id = r.tenant_id and x.status = 'running')
      order by r.priority desc, r.queued_at, r.id
      limit ${limit * 4}
      for update of r skip locked`.execute(tx);
    const byTenant = new Map<string, { cap: number; ids: string[] }>();
    for (const cand of candidates.rows) {
      const entry = byTenant.get(cand.tenant_id) ?? { cap: Number(cand.max_running), ids: [] };
      entry.ids.push(String(cand.id));
      byTenant.set(cand.tenant_id, entry);
    }
    const chosen: string[] = [];
    for (const tenant of [...byTenant.keys()].sort()) {
      if (chosen.length >= limit) break;
      const entry = byTenant.get(tenant)!;
      // Raw: on the claim path, whose statement texts stay as measured.
      await sql`select pg_advisory_xact_lock(hashtext(${`openrath.tenant.${c.schema}.${tenant}`}))`.execute(
        tx,
      );
      // Raw: on the claim path, whose statement texts stay as measured.
      const running = await sql<{
        n: number;
      }>`select count(*)::int as n from ${runs} where tenant_id = ${tenant} and status = 'running'`.execute(
        tx,
      );
      const room = Math.max(0, entry.cap - Number(running.rows[0]?.n ?? 0));
      chosen.push(...entry.ids.slice(0, Math.min(room, limit - chosen.length)));
    }
    if (chosen.length === 0) return [];
    // Raw: the update and its event insert are data-modifying CTEs of one statement.
    const updated = await sql<RunRow>`
      with upd as (
        update ${runs} r set status = 'running', version = r.version + 1, fencing_token = ${nextToken()},
          lease_holder = ${request.workerId}, lease_expires_at = now() + ${request.leaseMs} * interval '1 millisecond',
          event_seq = r.event_seq + 1, updated_at = now()
        where r.id = any(${chosen}::uuid[]) and r.status = 'queued'
        returning ${runColumns("r")}
      ),
      ev as (
        insert into ${events} (run_id, seq, type, data)
        select id, event_seq, 'run.claimed', json_build_object('workerId', lease_holder, 'fencingToken', fencing_token, 'attempt', attempt, 'from', 'queued', 'to', 'running')::text
        from upd
      )
      select *${relaxedClaim(c)} from upd`.execute(tx);
    return claimsOf(updated.rows, request.workerId);
  });
}

/** See `RunStoreV1.reclaim`. */
export async function reclaimRuns(c: StoreContext, request: Omit<ClaimRequest, "limit">): Promise<Claim[]> {
  const { runs, events } = c.t;
  const hashes = [...request.planHashes];
  // Raw: the update and its event insert are data-modifying CTEs of one statement.
  const result = await sql<RunRow>`
    with upd as (
      update ${runs} r set version = r.version + 1, fencing_token = ${nextToken()},
        lease_expires_at = now() + ${request.leaseMs} * interval '1 millisecond', event_seq = r.event_seq + 1, updated_at = now()
      where r.status = 'running' and r.lease_holder = ${request.workerId} and r.plan_hash = any(${hashes}::text[])
      returning ${runColumns("r")}
    ),
    ev as (
      insert into ${events} (run_id, seq, type, data)
      select id, event_seq, 'run.reclaimed', json_build_object('workerId', lease_holder, 'fencingToken', fencing_token)::text from upd
    )
    select *${relaxedClaim(c)} from upd`.execute(c.db);
  return claimsOf(result.rows, request.workerId);
}

/** See `RunStoreV1.heartbeat`. */
export async function heartbeat(
  c: StoreContext,
  fences: readonly Fence[],
  leaseMs: number,
): Promise<HeartbeatResult> {
  const renewed = new Map<string, number>();
  const lost = new Map<string, { status: RunStatus | null; reason: string }>();
  if (fences.length === 0) return { renewed, lost };
  const ids = fences.map((f) => f.runId);
  const tokens = fences.map((f) => String(f.token));
  const holders = fences.map((f) => f.workerId);
  const { runs } = c.t;
  // Raw: an `unnest` of three arrays joined to a data-modifying CTE.
  const result = await sql<{
    id: string;
    expires: unknown;
    status: string | null;
    token: unknown;
    expired: boolean | null;
  }>`
    with f as (select * from unnest(${ids}::uuid[], ${tokens}::bigint[], ${holders}::text[]) as f(id, token, holder)),
    upd as (
      update ${runs} r set lease_expires_at = now() + ${leaseMs} * interval '1 millisecond'
      from f
      where r.id = f.id and r.fencing_token = f.token and r.lease_holder = f.holder and r.status = 'running' and r.lease_expires_at > now()
      returning r.id, r.lease_expires_at
    )
    select f.id, upd.lease_expires_at as expires, r.status, r.fencing_token as token, r.lease_expires_at <= now() as expired
    from f left join upd on upd.id = f.id left join ${runs} r on r.id = f.id`.execute(c.db);
  const byId = new Map(fences.map((f) => [f.runId, f]));
  for (const row of result.rows) {
    const id = String(row.id);
    if (row.expires !== null && row.expires !== undefined) {
      renewed.set(id, toMs(row.expires)!);
      continue;
    }
    const fence = byId.get(id)!;
    const status = (row.status as RunStatus | null) ?? null;
    const reason =
      status === null
        ? "the run no longer exists"
        : status !== "running"
          ? `the run is ${status}`
          : Number(row.token) !== fence.token
            ? `another worker holds the lease now (token ${Number(row.token)}, ours ${fence.token})`
            : "the lease expired";
    lost.set(id, { status, reason });
  }
  return { renewed, lost };
}
