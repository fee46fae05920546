import type { MemoryV1 } from "@openrath/core";
import type {
  ArtifactStoreV1,
  AuditInput,
  AuditOutcome,
  DurableRuntime,
  RunRecord,
} from "@openrath/runtime-durable";
import type { AccessStoreV1 } from "@openrath/runtime-durable/store";
import type { FastifyRequest } from "fastify";
import type { Principal } from "./auth.js";
import { notFound } from "./errors.js";
import type { Action } from "./grants.js";
import type { RunFollowers } from "./run-followers.js";
import type { TokenCache } from "./token-cache.js";

declare module "fastify" {
  interface FastifyRequest {
    /** Who the request acts as; set before the handler of every route that needs an action. */
    principal?: Principal;
  }
  interface FastifyContextConfig {
    /** The grant the route needs; routes without one (health, docs) need no credentials. */
    action?: Action;
  }
}

/** What every route handler works with. */
export interface ServerContext {
  readonly runtime: DurableRuntime;
  /** The store's tokens and audit log, when it has `capabilities.access`. */
  readonly access: AccessStoreV1 | undefined;
  readonly artifacts: ArtifactStoreV1 | undefined;
  /** The tenants' memory, when the server has one. */
  readonly memory: MemoryV1 | undefined;
  /** Token lookups of the `tokens` authenticator, when cached: the revoke route evicts from it. */
  readonly tokenCache: TokenCache | undefined;
  /** The shared follows of runs that SSE streams join. */
  readonly followers: RunFollowers;
}

/** The request's principal (routes with an action always have one). */
export function principalOf(request: FastifyRequest): Principal {
  const principal = request.principal;
  if (!principal) throw new Error("A route with an action ran without a principal.");
  return principal;
}

/** An audit record of `request` doing its route's action to one resource. */
export function auditOf(
  request: FastifyRequest,
  resourceKind: string,
  resourceId: string | null,
  outcome: AuditOutcome = "allowed",
  extra: Partial<Pick<AuditInput, "reason" | "attributes">> = {},
): AuditInput {
  const principal = request.principal;
  return {
    tenantId: principal?.tenantId ?? "-",
    actor: principal?.actor ?? "anonymous",
    action: request.routeOptions.config.action ?? `${request.method} ${request.routeOptions.url ?? ""}`,
    outcome,
    resourceKind,
    resourceId,
    requestId: request.id,
    ...extra,
  };
}

/** A run the principal may see: its tenant's and, for a project-scoped principal, its project's. */
export async function visibleRun(
  context: ServerContext,
  principal: Principal,
  runId: string,
): Promise<RunRecord> {
  const run = await context.runtime.get(runId, { tenantId: principal.tenantId });
  const project = (run as { projectId?: string | null } | undefined)?.projectId ?? null;
  if (!run || (principal.projectId !== null && project !== principal.projectId))
    throw notFound("run", runId, "run_not_found");
  return run;
}

/** `record` (an interrupt, an effect) when the principal may see its run; else `<what>_not_found`. */
export async function visibleByRun<T extends { readonly runId: string }>(
  context: ServerContext,
  principal: Principal,
  record: T | undefined,
  what: "interrupt" | "effect",
  id: string,
): Promise<T> {
  const missing = () => notFound(what, id, `${what}_not_found`);
  if (!record) throw missing();
  await visibleRun(context, principal, record.runId).catch(() => {
    throw missing();
  });
  return record;
}
