import createFetchClient from "openapi-fetch";
import { followStream, type OpenStream } from "./event-stream.js";
import type { paths } from "./generated/openapi.js";
import { paginate } from "./internal/paginate.js";
import { errorFromResponse, OpenRathApiError } from "./openrath-api-error.js";
import type { CreateRunOptions, OpenRathClient, RequestOptions, RunMethods } from "./openrath-client.js";
import type { CreateRunBody, Readiness } from "./types.js";

/** Options of {@link createClient}. */
export interface ClientOptions {
  /** The server's root URL (`http://127.0.0.1:8787`); a path prefix is kept. */
  readonly baseUrl: string;
  /** A bearer token (`ort_...`), sent as `Authorization: Bearer <token>` on every request. */
  readonly token?: string;
  /** The fetch to use (default `globalThis.fetch`); it is called with a `Request`. */
  readonly fetch?: (request: Request) => Promise<Response>;
  /** Headers sent on every request. */
  readonly headers?: Readonly<Record<string, string>>;
}

/** What openapi-fetch answers: the parsed body on success, the parsed error body otherwise. */
interface Answer<T> {
  readonly data?: T;
  readonly error?: unknown;
  readonly response: Response;
}

/** The body of a successful answer; anything else throws the server's error. */
async function ok<T>(pending: Promise<Answer<T>>): Promise<T> {
  const { data, error, response } = await pending;
  if (!response.ok) throw errorFromResponse(response, error);
  return data as T;
}

const init = (options: RequestOptions | undefined) => ({
  ...(options?.signal ? { signal: options.signal } : {}),
  ...(options?.headers ? { headers: { ...options.headers } } : {}),
});

/**
 * A typed client of an OpenRath Agent Server: a method for every route, typed from the server's
 * OpenAPI document, and `events.stream`, which follows a run's server-sent events across
 * dropped connections. Uses only fetch, streams and `TextDecoder`, so it runs in Node 20 and in
 * browsers.
 *
 * @example
 * ```ts
 * const client = createClient({ baseUrl: "http://127.0.0.1:8787", token: process.env.OPENRATH_TOKEN });
 * const run = await client.runs.create({ assistant: "support", input: "I want a refund" });
 * for await (const event of client.events.stream(run.id)) console.log(event.type);
 * console.log((await client.runs.get(run.id)).status);
 * ```
 */
export function createClient(options: ClientOptions): OpenRathClient {
  const api = createFetchClient<paths>({
    baseUrl: options.baseUrl,
    ...(options.fetch ? { fetch: options.fetch } : {}),
    headers: {
      ...options.headers,
      ...(options.token !== undefined ? { Authorization: `Bearer ${options.token}` } : {}),
    },
  });

  const openStream =
    (runId: string): OpenStream =>
    async ({ after, lastEventId, parked, signal }) => {
      const { data, error, response } = await api.GET("/v1/runs/{runId}/stream", {
        params: {
          path: { runId },
          query: {
            ...(after !== undefined ? { after } : {}),
            ...(parked ? { parked: "true" as const } : {}),
          },
          header: lastEventId !== undefined ? { "last-event-id": String(lastEventId) } : {},
        },
        headers: { Accept: "text/event-stream" },
        parseAs: "stream",
        signal,
      });
      if (!response.ok) throw errorFromResponse(response, error);
      if (!data)
        throw new OpenRathApiError({
          status: response.status,
          code: "unexpected_response",
          message: "The event stream's response has no body.",
          requestId: response.headers.get("x-request-id"),
        });
      return { response, body: data as ReadableStream<Uint8Array> };
    };

  // `create` and `createOrEnqueue` are one request; the server's status says which body it is.
  const createRun = (body: CreateRunBody, request?: CreateRunOptions) =>
    ok(
      api.POST("/v1/runs", {
        params: {
          header: request?.idempotencyKey !== undefined ? { "idempotency-key": request.idempotencyKey } : {},
        },
        body,
        ...init(request),
      }),
    );

  const client: OpenRathClient = {
    health: {
      live: (request) => ok(api.GET("/health/live", init(request))),
      ready: async (request) => {
        const { data, error, response } = await api.GET("/health/ready", init(request));
        // Not ready (503) answers with the same body: a probe wants the failed checks.
        if (response.ok || response.status === 503) return (data ?? error) as Readiness;
        throw errorFromResponse(response, error);
      },
    },
    assistants: {
      list: (request) => ok(api.GET("/v1/assistants", init(request))),
      get: (name, request) =>
        ok(api.GET("/v1/assistants/{name}", { params: { path: { name } }, ...init(request) })),
      deploy: (name, version, request) =>
        ok(
          api.POST("/v1/assistants/{name}/deployments", {
            params: { path: { name } },
            body: { version },
            ...init(request),
          }),
        ),
    },
    runs: {
      create: (body, request) => createRun(body, request) as ReturnType<RunMethods["create"]>,
      createOrEnqueue: (body, request) => createRun(body, request),
      get: (runId, request) =>
        ok(api.GET("/v1/runs/{runId}", { params: { path: { runId } }, ...init(request) })),
      list: ({ status, ...query } = {}, request) => {
        const statuses = typeof status === "string" ? status : status?.join(",");
        return ok(
          api.GET("/v1/runs", {
            params: { query: { ...query, ...(statuses !== undefined ? { status: statuses } : {}) } },
            ...init(request),
          }),
        );
      },
      listAll: (query = {}, request) =>
        paginate((after) => client.runs.list({ ...query, ...(after ? { after } : {}) }, request)),
      cancel: (runId, body = {}, request) =>
        ok(api.POST("/v1/runs/{runId}/cancel", { params: { path: { runId } }, body, ...init(request) })),
      resume: (runId, body = {}, request) =>
        ok(api.POST("/v1/runs/{runId}/resume", { params: { path: { runId } }, body, ...init(request) })),
      session: (runId, query = {}, request) =>
        ok(api.GET("/v1/runs/{runId}/session", { params: { path: { runId }, query }, ...init(request) })),
      wait: async (runId, stream = {}) => {
        for await (const _ of client.events.stream(runId, stream)) {
          // Only the stream's end matters here.
        }
        return client.runs.get(runId, stream.signal ? { signal: stream.signal } : {});
      },
    },
    sessions: {
      get: (sessionId, request) =>
        ok(api.GET("/v1/sessions/{sessionId}", { params: { path: { sessionId } }, ...init(request) })),
      lineage: (sessionId, request) =>
        ok(
          api.GET("/v1/sessions/{sessionId}/lineage", { params: { path: { sessionId } }, ...init(request) }),
        ),
    },
    artifacts: {
      get: async (digest, request) =>
        (await ok(
          api.GET("/v1/artifacts/{digest}", {
            params: { path: { digest } },
            parseAs: "arrayBuffer",
            ...init(request),
          }),
        )) as unknown as ArrayBuffer,
    },
    memory: {
      remember: (body, request) => ok(api.POST("/v1/memory/remember", { body, ...init(request) })),
      recall: (body, request) => ok(api.POST("/v1/memory/recall", { body, ...init(request) })),
      forget: (body, request) => ok(api.POST("/v1/memory/forget", { body, ...init(request) })),
    },
    events: {
      list: (runId, query = {}, request) =>
        ok(api.GET("/v1/runs/{runId}/events", { params: { path: { runId }, query }, ...init(request) })),
      listAll: (runId, query = {}, request) =>
        paginate((next) =>
          client.events.list(runId, { ...query, ...(next ? { after: Number(next) } : {}) }, request),
        ),
      stream: (runId, stream = {}) => followStream(runId, openStream(runId), stream),
    },
    interrupts: {
      list: (query = {}, request) => ok(api.GET("/v1/interrupts", { params: { query }, ...init(request) })),
      listAll: (query = {}, request) =>
        paginate((cursor) => client.interrupts.list({ ...query, ...(cursor ? { cursor } : {}) }, request)),
      get: (interruptId, request) =>
        ok(api.GET("/v1/interrupts/{interruptId}", { params: { path: { interruptId } }, ...init(request) })),
      decide: (interruptId, decision, request) =>
        ok(
          api.POST("/v1/interrupts/{interruptId}/decision", {
            params: { path: { interruptId } },
            body: decision,
            ...init(request),
          }),
        ),
    },
    effects: {
      list: (query = {}, request) => ok(api.GET("/v1/effects", { params: { query }, ...init(request) })),
      listAll: (query = {}, request) =>
        paginate((cursor) => client.effects.list({ ...query, ...(cursor ? { cursor } : {}) }, request)),
      get: (effectId, request) =>
        ok(api.GET("/v1/effects/{effectId}", { params: { path: { effectId } }, ...init(request) })),
      resolve: (effectId, resolution, request) =>
        ok(
          api.POST("/v1/effects/{effectId}/resolution", {
            params: { path: { effectId } },
            body: resolution,
            ...init(request),
          }),
        ),
    },
    tokens: {
      list: (request) => ok(api.GET("/v1/tokens", init(request))),
      create: (body, request) => ok(api.POST("/v1/tokens", { body, ...init(request) })),
      revoke: (tokenId, request) =>
        ok(api.DELETE("/v1/tokens/{tokenId}", { params: { path: { tokenId } }, ...init(request) })),
    },
    auth: {
      whoami: (request) => ok(api.GET("/v1/auth/whoami", init(request))),
    },
    audit: {
      list: (query = {}, request) => ok(api.GET("/v1/audit", { params: { query }, ...init(request) })),
      listAll: (query = {}, request) =>
        paginate((cursor) => client.audit.list({ ...query, ...(cursor ? { cursor } : {}) }, request)),
    },
  };
  return client;
}
