import type { components, paths } from "./generated/openapi.js";

// Every type here is read from the generated `paths` and `components`: when the server's document
// changes and the types are regenerated, these follow (and the client stops compiling if it must).

type Schemas = components["schemas"];
type Method = "get" | "post" | "delete";

/** The JSON body of the response with `status` of `method path`, as the OpenAPI document says. */
export type ResponseBody<P extends keyof paths, M extends Method, S extends number> = paths[P][M] extends {
  responses: { [K in S]: { content: { "application/json": infer T } } };
}
  ? T
  : never;

/** The JSON request body of `method path`. */
export type RequestBody<P extends keyof paths, M extends Method> = paths[P][M] extends {
  requestBody?: { content: { "application/json": infer T } };
}
  ? T
  : never;

/** The query parameters of `method path` (every one optional unless the document says otherwise). */
export type QueryOf<P extends keyof paths, M extends Method> = paths[P][M] extends {
  parameters: { query?: infer Q };
}
  ? NonNullable<Q>
  : never;

/** A durable run as the server shows it. */
export type Run = Schemas["Run"];
/** A run's status: `queued`, `running`, `waiting`, `needs_review` or one of the terminal ones. */
export type RunStatus = Schemas["RunStatus"];
/** A stored event of a run; `sequence` is gap-free from 1 per run. */
export type Event = Schemas["Event"];
/** An interrupt: a step's request for approval or input. */
export type Interrupt = Schemas["Interrupt"];
/** An effect of the ledger (by default the ones under review). */
export type Effect = Schemas["Effect"];
/** An API token (never its secret). */
export type Token = Schemas["Token"];
/** The request's own credentials: tenant, project, grants, the actions they allow, expiry. */
export type Whoami = Schemas["Whoami"];
/** One record of the tenant's audit log. */
export type AuditEntry = Schemas["AuditEntry"];
/** A deployed workflow by name and its revisions. */
export type Assistant = Schemas["Assistant"];
/** One registered revision of an assistant. */
export type Revision = Schemas["Revision"];
/** A session as `Session.toJSON()` writes it (`Session.fromJSON` in `@openrath/core` reads it). */
export type SessionJson = Schemas["Session"];
/** The body of `POST /v1/runs`. */
export type CreateRunBody = RequestBody<"/v1/runs", "post">;
/** The body of `POST /v1/interrupts/{interruptId}/decision`. */
export type Decision = RequestBody<"/v1/interrupts/{interruptId}/decision", "post">;
/** The body of `POST /v1/effects/{effectId}/resolution`. */
export type Resolution = RequestBody<"/v1/effects/{effectId}/resolution", "post">;
/** The body of `POST /v1/tokens`. */
export type CreateTokenBody = RequestBody<"/v1/tokens", "post">;
/** `GET /health/ready`'s answer, on 200 and on 503 alike. */
export type Readiness = ResponseBody<"/health/ready", "get", 200>;

/** One page of a list: `next` is the cursor of the following page, null on the last. */
export interface Page<T> {
  readonly items: T[];
  readonly next: string | null;
}

/** Query of `GET /v1/runs`; `status` may also be a list of statuses. */
export type ListRunsQuery = Omit<QueryOf<"/v1/runs", "get">, "status"> & {
  readonly status?: string | readonly RunStatus[];
};
/** Query of `GET /v1/runs/{runId}/events`. */
export type ListEventsQuery = QueryOf<"/v1/runs/{runId}/events", "get">;
/** Query of `GET /v1/interrupts`. */
export type ListInterruptsQuery = QueryOf<"/v1/interrupts", "get">;
/** Query of `GET /v1/effects`. */
export type ListEffectsQuery = QueryOf<"/v1/effects", "get">;
/** Query of `GET /v1/audit`. */
export type ListAuditQuery = QueryOf<"/v1/audit", "get">;
