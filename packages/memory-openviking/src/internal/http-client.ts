/**
 * A small fetch client for OpenViking's HTTP API: the `/api/v1` envelope, the identity headers,
 * timeouts, and one error type that keeps whatever the server or the transport said.
 */

/** Where the server is and who we are to it. */
export interface HttpClientConfig {
  /** Base URL without a trailing slash, such as `http://127.0.0.1:1933`. */
  readonly baseUrl: string;
  readonly apiKey?: string;
  readonly account: string;
  readonly user: string;
  readonly actorPeer?: string;
  readonly timeoutMs: number;
  readonly fetch: typeof fetch;
}

/** Query values; `undefined`, `null` and `""` are dropped, as the official clients do. */
export type Query = Readonly<Record<string, string | number | boolean | undefined | null>>;

/** One request. */
export interface HttpRequest {
  readonly method: "GET" | "POST" | "DELETE";
  /** Path under the base URL, such as `/api/v1/content/write`. */
  readonly path: string;
  readonly query?: Query;
  /** JSON body; absent means no body. */
  readonly body?: unknown;
  readonly signal?: AbortSignal;
}

/** What a failed exchange said: an HTTP answer with (usually) an envelope, or no answer at all. */
export class OpenVikingHttpError extends Error {
  /** HTTP status, or undefined when no response came back. */
  readonly status: number | undefined;
  /** The envelope's `error.code` (`NOT_FOUND`, `UNAUTHENTICATED`, …) when there was one. */
  readonly code: string | undefined;
  /** The envelope's `error.details`. */
  readonly remoteDetails: unknown;
  /** Whether the body was an OpenViking envelope (a proxy's HTML 502 is not). */
  readonly enveloped: boolean;
  /** `timeout`, `refused` (nothing listens), `network` (the exchange broke) when no response came back. */
  readonly transport: "timeout" | "refused" | "network" | undefined;
  readonly method: string;
  readonly path: string;

  constructor(init: {
    message: string;
    method: string;
    path: string;
    status?: number;
    code?: string;
    remoteDetails?: unknown;
    enveloped?: boolean;
    transport?: "timeout" | "refused" | "network";
    cause?: unknown;
  }) {
    super(init.message, init.cause === undefined ? undefined : { cause: init.cause });
    this.name = "OpenVikingHttpError";
    this.status = init.status;
    this.code = init.code;
    this.remoteDetails = init.remoteDetails;
    this.enveloped = init.enveloped ?? false;
    this.transport = init.transport;
    this.method = init.method;
    this.path = init.path;
  }
}

/** Codes the server's framework handler gives bare HTTP statuses (mirrors OpenViking's app.py). */
const FRAMEWORK_CODES: Record<number, string> = {
  400: "INVALID_ARGUMENT",
  401: "UNAUTHENTICATED",
  403: "PERMISSION_DENIED",
  404: "NOT_FOUND",
  409: "CONFLICT",
  422: "INVALID_ARGUMENT",
  429: "RESOURCE_EXHAUSTED",
  502: "UNAVAILABLE",
  503: "UNAVAILABLE",
  504: "DEADLINE_EXCEEDED",
};

const REFUSED = new Set(["ECONNREFUSED", "ENOTFOUND", "EAI_AGAIN", "EHOSTUNREACH", "ENETUNREACH"]);

function transportCode(error: unknown): string | undefined {
  let cause: unknown = error;
  for (let depth = 0; depth < 6 && cause; depth++) {
    const c = cause as { code?: unknown; cause?: unknown; errors?: unknown };
    if (typeof c.code === "string") return c.code;
    if (Array.isArray(c.errors) && c.errors.length > 0) {
      const inner = transportCode(c.errors[0]);
      if (inner) return inner;
    }
    cause = c.cause;
  }
  return undefined;
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/** The fetch client. One instance per open store. */
export class HttpClient {
  constructor(private readonly config: HttpClientConfig) {}

  /** The headers every call carries. */
  headers(json: boolean): Record<string, string> {
    const h: Record<string, string> = {
      Accept: "application/json",
      "X-OpenViking-Account": this.config.account,
      "X-OpenViking-User": this.config.user,
    };
    if (this.config.actorPeer !== undefined) h["X-OpenViking-Actor-Peer"] = this.config.actorPeer;
    if (this.config.apiKey !== undefined) h["X-API-Key"] = this.config.apiKey;
    if (json) h["Content-Type"] = "application/json";
    return h;
  }

  /** Builds the URL of `path` with `query` (empty values dropped). */
  url(path: string, query: Query = {}): string {
    const params = new URLSearchParams();
    for (const [key, value] of Object.entries(query)) {
      if (value === undefined || value === null || value === "") continue;
      params.append(key, String(value));
    }
    const qs = params.toString();
    return `${this.config.baseUrl}${path}${qs ? `?${qs}` : ""}`;
  }

  /**
   * Sends a request and returns the envelope's `result`.
   *
   * @throws {OpenVikingHttpError} for a transport failure, a non-2xx status, `status: "error"` or a
   *   non-null `error` (some routes answer 200 with an error envelope).
   */
  async call<T = unknown>(request: HttpRequest): Promise<T> {
    const { text, status } = await this.exchange(request);
    return this.unwrap<T>(request, status, text);
  }

  /** `GET /health`, which is not enveloped. */
  async health(signal?: AbortSignal): Promise<Record<string, unknown>> {
    const request: HttpRequest = { method: "GET", path: "/health", ...(signal ? { signal } : {}) };
    const { text, status } = await this.exchange(request);
    let body: unknown;
    try {
      body = JSON.parse(text);
    } catch {
      body = undefined;
    }
    if (status < 200 || status >= 300 || !isObject(body) || body.status !== "ok") {
      const envelope = isObject(body) && isObject(body.error) ? body.error : undefined;
      throw new OpenVikingHttpError({
        message:
          typeof envelope?.message === "string"
            ? envelope.message
            : `health check answered HTTP ${status}: ${text.slice(0, 200)}`,
        method: "GET",
        path: "/health",
        status,
        ...(typeof envelope?.code === "string" ? { code: envelope.code } : {}),
        enveloped: envelope !== undefined,
      });
    }
    return body;
  }

  private async exchange(request: HttpRequest): Promise<{ status: number; text: string }> {
    const timeout = AbortSignal.timeout(this.config.timeoutMs);
    const signal = request.signal ? AbortSignal.any([request.signal, timeout]) : timeout;
    const hasBody = request.body !== undefined;
    const init: RequestInit = {
      method: request.method,
      headers: this.headers(hasBody),
      signal,
      ...(hasBody ? { body: JSON.stringify(request.body) } : {}),
    };
    const url = this.url(request.path, request.query);
    try {
      const response = await this.config.fetch(url, init);
      const text = await response.text();
      return { status: response.status, text };
    } catch (error) {
      if (timeout.aborted) {
        throw new OpenVikingHttpError({
          message: `no answer within ${this.config.timeoutMs} ms`,
          method: request.method,
          path: request.path,
          transport: "timeout",
          cause: error,
        });
      }
      if (request.signal?.aborted) throw request.signal.reason ?? error;
      const code = transportCode(error);
      const refused = code !== undefined && REFUSED.has(code);
      throw new OpenVikingHttpError({
        message: `${refused ? "could not connect" : "the connection failed"} (${code ?? (error as Error).message})`,
        method: request.method,
        path: request.path,
        transport: refused ? "refused" : "network",
        cause: error,
      });
    }
  }

  private unwrap<T>(request: HttpRequest, status: number, text: string): T {
    let body: unknown;
    let parsed = true;
    try {
      body = text.trim() === "" ? undefined : JSON.parse(text);
    } catch {
      parsed = false;
    }
    const ok = status >= 200 && status < 300;
    const envelope = parsed && isObject(body) && ("status" in body || "result" in body || "error" in body);
    if (envelope) {
      const e = body as { status?: unknown; result?: unknown; error?: unknown };
      // `error: null` is success; treat a truthy error or `status: "error"` as failure even on 200.
      const failed = !ok || e.status === "error" || (e.error !== null && e.error !== undefined);
      if (!failed) return (e.result ?? null) as T;
      const info = isObject(e.error) ? e.error : {};
      const code =
        typeof info.code === "string" && info.code !== ""
          ? info.code
          : (FRAMEWORK_CODES[status] ?? undefined);
      const message =
        typeof info.message === "string" && info.message !== ""
          ? info.message
          : `HTTP ${status} with an error envelope and no message`;
      throw new OpenVikingHttpError({
        message,
        method: request.method,
        path: request.path,
        status,
        ...(code !== undefined ? { code } : {}),
        remoteDetails: info.details ?? null,
        enveloped: true,
      });
    }
    if (ok && parsed) return (body ?? null) as T;
    const snippet = text.length > 300 ? `${text.slice(0, 297)}...` : text;
    throw new OpenVikingHttpError({
      message: ok
        ? `HTTP ${status} with a body that is not JSON: ${snippet}`
        : `HTTP ${status} without an OpenViking envelope: ${snippet || "(empty body)"}`,
      method: request.method,
      path: request.path,
      status,
      ...(FRAMEWORK_CODES[status] ? { code: FRAMEWORK_CODES[status] } : {}),
      enveloped: false,
    });
  }
}
