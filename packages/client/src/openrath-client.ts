import type { StreamEvent, StreamOptions } from "./event-stream.js";
import type {
  AuditEntry,
  CreateRunBody,
  CreateTokenBody,
  Decision,
  Effect,
  Event,
  Interrupt,
  ListAuditQuery,
  ListEffectsQuery,
  ListEventsQuery,
  ListInterruptsQuery,
  ListRunsQuery,
  Readiness,
  RequestBody,
  Resolution,
  ResponseBody,
  Run,
  Whoami,
} from "./types.js";

/** Options every method takes last. */
export interface RequestOptions {
  /** Aborts the request; the call then rejects with the signal's reason. */
  readonly signal?: AbortSignal;
  /** Headers for this request only, over the client's (a `traceparent`, say). */
  readonly headers?: Readonly<Record<string, string>>;
}

/** `client.health`: probes that need no token. */
export interface HealthMethods {
  /** `GET /health/live`: the process answers. */
  live(options?: RequestOptions): Promise<ResponseBody<"/health/live", "get", 200>>;
  /** `GET /health/ready`: every dependency's check; `status: "not_ready"` (HTTP 503) is returned, not thrown. */
  ready(options?: RequestOptions): Promise<Readiness>;
}

/** `client.assistants`: the workflows the server runs, by name. */
export interface AssistantMethods {
  /** `GET /v1/assistants` (grant `assistant.read`). */
  list(options?: RequestOptions): Promise<ResponseBody<"/v1/assistants", "get", 200>>;
  /** `GET /v1/assistants/{name}`; `not_found` when no revision has the name. */
  get(name: string, options?: RequestOptions): Promise<ResponseBody<"/v1/assistants/{name}", "get", 200>>;
  /** `POST /v1/assistants/{name}/deployments`: points the name at `version` (grant `assistant.deploy`). */
  deploy(
    name: string,
    version: string,
    options?: RequestOptions,
  ): Promise<ResponseBody<"/v1/assistants/{name}/deployments", "post", 200>>;
}

/** Options of `client.runs.create`. */
export interface CreateRunOptions extends RequestOptions {
  /** Sent as `Idempotency-Key`: the same key and body return the first run; another body is `idempotency_conflict`. */
  readonly idempotencyKey?: string;
}

/** `client.runs`: durable runs. */
export interface RunMethods {
  /**
   * `POST /v1/runs`: starts a run of `body.assistant` from `input`, a whole `session`, a fork
   * `from` another run's checkpoint, or a `merge` of several runs' sessions (grant `run.create`).
   */
  create(
    body: CreateRunBody & { readonly ifBusy?: "reject" | "interrupt" },
    options?: CreateRunOptions,
  ): Promise<ResponseBody<"/v1/runs", "post", 201>>;
  /**
   * `POST /v1/runs` with any busy-session policy: with `ifBusy: "enqueue"`, a session whose run is
   * still active answers with the queued message (HTTP 202; `status: "pending"`, then
   * `submitted` with its `runId`, as `GET /v1/queued-messages/{id}` shows); otherwise the run.
   */
  createOrEnqueue(
    body: CreateRunBody,
    options?: CreateRunOptions,
  ): Promise<ResponseBody<"/v1/runs", "post", 201> | ResponseBody<"/v1/runs", "post", 202>>;
  /** `GET /v1/runs/{runId}`; `run_not_found` for a run of another tenant or project too. */
  get(runId: string, options?: RequestOptions): Promise<ResponseBody<"/v1/runs/{runId}", "get", 200>>;
  /** `GET /v1/runs`: one page, newest first (`order: "asc"`: oldest first); pass the page's `next` as `after` for the following one. */
  list(query?: ListRunsQuery, options?: RequestOptions): Promise<ResponseBody<"/v1/runs", "get", 200>>;
  /** Every run that matches `query`, page after page (`limit` sets the page size). */
  listAll(query?: Omit<ListRunsQuery, "after">, options?: RequestOptions): AsyncGenerator<Run>;
  /** `POST /v1/runs/{runId}/cancel` (grant `run.cancel`). */
  cancel(
    runId: string,
    body?: { reason?: string },
    options?: RequestOptions,
  ): Promise<ResponseBody<"/v1/runs/{runId}/cancel", "post", 200>>;
  /**
   * `POST /v1/runs/{runId}/resume` (grant `run.resume`): puts a run parked for review back in the
   * queue; `effects_under_review` while any of its effects waits for a resolution.
   */
  resume(
    runId: string,
    body?: { reason?: string },
    options?: RequestOptions,
  ): Promise<ResponseBody<"/v1/runs/{runId}/resume", "post", 200>>;
  /** `GET /v1/runs/{runId}/session`: the session of checkpoint `sequence` (default the latest). */
  session(
    runId: string,
    query?: { sequence?: number },
    options?: RequestOptions,
  ): Promise<ResponseBody<"/v1/runs/{runId}/session", "get", 200>>;
  /**
   * Follows the run's event stream to its end (its end or, with `parked: true`, its park as well)
   * and returns the run as it then is.
   */
  wait(runId: string, options?: Omit<StreamOptions, "after">): Promise<Run>;
}

/** `client.sessions`: sessions as the runs that carried them stored them. */
export interface SessionMethods {
  /** `GET /v1/sessions/{sessionId}`: its newest checkpoint and its runs (grant `session.read`). */
  get(
    sessionId: string,
    options?: RequestOptions,
  ): Promise<ResponseBody<"/v1/sessions/{sessionId}", "get", 200>>;
  /** `GET /v1/sessions/{sessionId}/lineage`: the lineage DAG behind it, parents first. */
  lineage(
    sessionId: string,
    options?: RequestOptions,
  ): Promise<ResponseBody<"/v1/sessions/{sessionId}/lineage", "get", 200>>;
}

/** `client.artifacts`: large payloads by digest. */
export interface ArtifactMethods {
  /** `GET /v1/artifacts/{digest}`: the bytes of the caller's tenant's artifact (grant `artifact.read`). */
  get(digest: string, options?: RequestOptions): Promise<ArrayBuffer>;
}

/** `client.memory`: the tenant's memory, at a scope below the tenant (grants `memory.read`, `memory.write`). */
export interface MemoryMethods {
  /** `POST /v1/memory/remember`: stores entries at `body.scope` (default the tenant level). */
  remember(
    body: RequestBody<"/v1/memory/remember", "post">,
    options?: RequestOptions,
  ): Promise<ResponseBody<"/v1/memory/remember", "post", 201>>;
  /** `POST /v1/memory/recall`: entries relevant to `body.query` at the scope and its enclosing levels. */
  recall(
    body: RequestBody<"/v1/memory/recall", "post">,
    options?: RequestOptions,
  ): Promise<ResponseBody<"/v1/memory/recall", "post", 200>>;
  /** `POST /v1/memory/forget`: entries by id at `body.scope`, or the scope's whole subtree. */
  forget(
    body: RequestBody<"/v1/memory/forget", "post">,
    options?: RequestOptions,
  ): Promise<ResponseBody<"/v1/memory/forget", "post", 200>>;
}

/** `client.events`: a run's stored events, paged or streamed. */
export interface EventMethods {
  /** `GET /v1/runs/{runId}/events`: one page; pass `Number(page.next)` as `after` for the following one. */
  list(
    runId: string,
    query?: ListEventsQuery,
    options?: RequestOptions,
  ): Promise<ResponseBody<"/v1/runs/{runId}/events", "get", 200>>;
  /** Every stored event of the run after `query.after`, page after page. */
  listAll(runId: string, query?: ListEventsQuery, options?: RequestOptions): AsyncGenerator<Event>;
  /**
   * `GET /v1/runs/{runId}/stream` as an async iterable: stored events (each once, in sequence
   * order) and live ones, across reconnections with `Last-Event-ID`. Ends when the server ends
   * the stream (the run ended, or parked with `parked: true`).
   *
   * @throws {OpenRathApiError} a refusal (`run_not_found`, `forbidden`, ...) at once; a drop
   *   only once `reconnect.retries` attempts in a row have failed.
   */
  stream(runId: string, options?: StreamOptions): AsyncGenerator<StreamEvent, void, undefined>;
}

/** `client.interrupts`: the inbox of steps waiting for a person. */
export interface InterruptMethods {
  /** `GET /v1/interrupts`: one page (default the pending ones); pass `next` as `cursor`. */
  list(
    query?: ListInterruptsQuery,
    options?: RequestOptions,
  ): Promise<ResponseBody<"/v1/interrupts", "get", 200>>;
  /** Every interrupt that matches `query`, page after page. */
  listAll(query?: Omit<ListInterruptsQuery, "cursor">, options?: RequestOptions): AsyncGenerator<Interrupt>;
  /** `GET /v1/interrupts/{interruptId}`. */
  get(
    interruptId: string,
    options?: RequestOptions,
  ): Promise<ResponseBody<"/v1/interrupts/{interruptId}", "get", 200>>;
  /**
   * `POST /v1/interrupts/{interruptId}/decision`: the run resumes where it asked (grant
   * `interrupt.decide`); `interrupt_decided` when it was decided already.
   */
  decide(
    interruptId: string,
    decision: Decision,
    options?: RequestOptions,
  ): Promise<ResponseBody<"/v1/interrupts/{interruptId}/decision", "post", 200>>;
}

/** `client.effects`: side effects, and resolving the ones under review. */
export interface EffectMethods {
  /** `GET /v1/effects`: one page (default those under review); pass `next` as `cursor`. */
  list(query?: ListEffectsQuery, options?: RequestOptions): Promise<ResponseBody<"/v1/effects", "get", 200>>;
  /** Every effect that matches `query`, page after page. */
  listAll(query?: Omit<ListEffectsQuery, "cursor">, options?: RequestOptions): AsyncGenerator<Effect>;
  /** `GET /v1/effects/{effectId}`. */
  get(
    effectId: string,
    options?: RequestOptions,
  ): Promise<ResponseBody<"/v1/effects/{effectId}", "get", 200>>;
  /** `POST /v1/effects/{effectId}/resolution`: the run resumes when no effect of it is left under review. */
  resolve(
    effectId: string,
    resolution: Resolution,
    options?: RequestOptions,
  ): Promise<ResponseBody<"/v1/effects/{effectId}/resolution", "post", 200>>;
}

/** `client.auth`: what the client's own credentials are. */
export interface AuthMethods {
  /**
   * `GET /v1/auth/whoami`: the tenant, project, grants (and the actions they allow) and expiry of
   * the client's token or JWT; needs no grant, and never returns a secret.
   */
  whoami(options?: RequestOptions): Promise<Whoami>;
}

/** `client.tokens`: API tokens of the caller's tenant. */
export interface TokenMethods {
  /** `GET /v1/tokens`. */
  list(options?: RequestOptions): Promise<ResponseBody<"/v1/tokens", "get", 200>>;
  /** `POST /v1/tokens`: the token and its secret, which no later answer shows again. */
  create(body: CreateTokenBody, options?: RequestOptions): Promise<ResponseBody<"/v1/tokens", "post", 201>>;
  /** `DELETE /v1/tokens/{tokenId}`: the revoked token. */
  revoke(
    tokenId: string,
    options?: RequestOptions,
  ): Promise<ResponseBody<"/v1/tokens/{tokenId}", "delete", 200>>;
}

/** `client.audit`: the tenant's audit log. */
export interface AuditMethods {
  /** `GET /v1/audit`: one page, oldest first; pass `next` as `cursor`. */
  list(query?: ListAuditQuery, options?: RequestOptions): Promise<ResponseBody<"/v1/audit", "get", 200>>;
  /** Every record that matches `query`, page after page. */
  listAll(query?: Omit<ListAuditQuery, "cursor">, options?: RequestOptions): AsyncGenerator<AuditEntry>;
}

/**
 * A client of one Agent Server, made by `createClient`. An answer that is not a success throws
 * `OpenRathApiError`; a network failure throws fetch's own error (a `TypeError`).
 */
export interface OpenRathClient {
  readonly health: HealthMethods;
  readonly assistants: AssistantMethods;
  readonly runs: RunMethods;
  readonly sessions: SessionMethods;
  readonly artifacts: ArtifactMethods;
  readonly memory: MemoryMethods;
  readonly events: EventMethods;
  readonly interrupts: InterruptMethods;
  readonly effects: EffectMethods;
  readonly tokens: TokenMethods;
  readonly audit: AuditMethods;
  readonly auth: AuthMethods;
}
