import { randomUUID } from "node:crypto";
import cors from "@fastify/cors";
import helmet from "@fastify/helmet";
import rateLimit from "@fastify/rate-limit";
import swagger from "@fastify/swagger";
import swaggerUi from "@fastify/swagger-ui";
import type { MemoryV1 } from "@openrath/core";
import type { ArtifactStoreV1, DurableRuntime } from "@openrath/runtime-durable";
import Fastify, { type FastifyBaseLogger, type FastifyInstance, type FastifyRequest } from "fastify";
import {
  hasZodFastifySchemaValidationErrors,
  jsonSchemaTransform,
  jsonSchemaTransformObject,
  serializerCompiler,
  validatorCompiler,
  type ZodTypeProvider,
} from "fastify-type-provider-zod";
import { AuthenticationFailed, type AuthOptions, authenticator } from "./auth.js";
import { auditOf, type ServerContext } from "./context.js";
import { ApiError, toApiError } from "./errors.js";
import { allows } from "./grants.js";
import { artifactRoutes } from "./routes/artifacts.js";
import { assistantRoutes } from "./routes/assistants.js";
import { auditRoutes } from "./routes/audit.js";
import { effectRoutes } from "./routes/effects.js";
import { eventRoutes } from "./routes/events.js";
import { healthRoutes } from "./routes/health.js";
import { interruptRoutes } from "./routes/interrupts.js";
import { memoryRoutes } from "./routes/memory.js";
import { metricsRoutes, type ServerMetricsOptions } from "./routes/metrics.js";
import { queuedMessageRoutes } from "./routes/queued-messages.js";
import { runRoutes } from "./routes/runs.js";
import { scheduleRoutes } from "./routes/schedules.js";
import { sessionRoutes } from "./routes/sessions.js";
import { tokenRoutes } from "./routes/tokens.js";
import { webhookRoutes } from "./routes/webhooks.js";
import { whoamiRoutes } from "./routes/whoami.js";
import { followSourceOf, RunFollowers } from "./run-followers.js";
import { studioRoutes } from "./studio.js";
import { TOKEN_CACHE_MS, TokenCache } from "./token-cache.js";

/** Options of {@link createServer}. */
export interface ServerOptions {
  /** The runtime the API fronts: its store, signals and registered workflows. */
  readonly runtime: DurableRuntime;
  /** How requests authenticate (default `tokens`, which needs a store with `capabilities.access`). */
  readonly auth?: AuthOptions;
  /** The artifact store runs offload large payloads to: served by `GET /v1/artifacts/{digest}`, checked by readiness. */
  readonly artifacts?: ArtifactStoreV1;
  /**
   * The tenants' memory (`/v1/memory/*`): each tenant is a root of the store's scope tree. The
   * server does not close it.
   */
  readonly memory?: MemoryV1;
  /** The largest request body in bytes (default 1 MiB); larger is `payload_too_large`. */
  readonly bodyLimit?: number;
  /** Requests per tenant per minute (default 1200); `false` for no limit. */
  readonly rateLimit?: { readonly max: number; readonly windowMs?: number } | false;
  /** Origins allowed to call the API from a browser; CORS is off unless some are given. */
  readonly corsOrigins?: readonly string[];
  /**
   * The host the server will listen on, for the `local` auth check (default `127.0.0.1`):
   * `local` mode is refused unless this is a loopback address.
   */
  readonly host?: string;
  /**
   * How long, in milliseconds, the `tokens` authenticator reuses a token lookup (default 5000;
   * 0 reads the store on every request). A revocation through this server takes effect at once;
   * one made in the store by another process within this time.
   */
  readonly tokenCacheMs?: number;
  /**
   * Fastify's logger: a pino logger (one JSON line per request and error, with the request id;
   * see `serverLogger`), pino options, or `false` (default).
   */
  readonly logger?: boolean | Record<string, unknown> | FastifyBaseLogger;
  /**
   * `GET /metrics` in the Prometheus text format (default on, with its own registry, behind the
   * `metrics.read` grant); `false` removes the route.
   */
  readonly metrics?: ServerMetricsOptions | false;
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
const LOOPBACK = new Set(["127.0.0.1", "::1", "localhost"]);

/** Whether `logger` is a logger instance (pino's shape) rather than options. */
function isLogger(logger: ServerOptions["logger"]): logger is FastifyBaseLogger {
  return typeof logger === "object" && typeof (logger as { child?: unknown }).child === "function";
}

/** The API's version, the `info.version` of the OpenAPI document. */
export const API_VERSION = "1.0.0";

/**
 * Builds the Agent Server on `options.runtime`: every route validated by its zod schemas, the
 * OpenAPI 3.1 document at `/openapi.json` and its reference page at `/docs`. Call `listen()` on
 * the result (and `close()` to stop; the runtime is the caller's to close).
 *
 * @example
 * ```ts
 * const server = await createServer({ runtime, auth: { mode: "tokens" } });
 * await server.listen({ port: 8787 });
 * ```
 */
export async function createServer(options: ServerOptions): Promise<FastifyInstance> {
  const { runtime } = options;
  const access = runtime.store.capabilities.access ? runtime.store.access : undefined;
  const auth = options.auth ?? { mode: "tokens" };
  if (auth.mode === "local" && !LOOPBACK.has(options.host ?? "127.0.0.1"))
    throw new ApiError(
      500,
      "internal",
      "`local` authentication is for a loopback host only; use tokens or JWTs.",
    );
  const cacheMs = options.tokenCacheMs ?? TOKEN_CACHE_MS;
  const tokenCache = auth.mode === "tokens" && cacheMs > 0 ? new TokenCache(cacheMs) : undefined;
  const authenticate = authenticator(auth, access, Date.now, tokenCache);
  const context: ServerContext = {
    runtime,
    access,
    artifacts: options.artifacts,
    memory: options.memory,
    tokenCache,
    followers: new RunFollowers(followSourceOf(runtime)),
  };

  const app = Fastify({
    bodyLimit: options.bodyLimit ?? 1024 * 1024,
    ...(isLogger(options.logger) ? { loggerInstance: options.logger } : { logger: options.logger ?? false }),
    // A client's request id is kept when it is a UUID, so ids in logs and audit stay well-formed.
    genReqId: (request) => {
      const given = request.headers["x-request-id"];
      return typeof given === "string" && UUID.test(given) ? given : randomUUID();
    },
    // Path and query strings stay short; ids are short.
    routerOptions: { maxParamLength: 256 },
  }).withTypeProvider<ZodTypeProvider>();
  app.setValidatorCompiler(validatorCompiler);
  app.setSerializerCompiler(serializerCompiler);

  await app.register(helmet, {
    // The reference page at /docs loads its own scripts and styles.
    contentSecurityPolicy: {
      directives: {
        defaultSrc: ["'self'"],
        imgSrc: ["'self'", "data:"],
        styleSrc: ["'self'", "'unsafe-inline'"],
      },
    },
  });
  if (options.corsOrigins && options.corsOrigins.length > 0)
    await app.register(cors, { origin: [...options.corsOrigins], exposedHeaders: ["X-Request-ID"] });

  await app.register(swagger, {
    openapi: {
      openapi: "3.1.0",
      info: {
        title: "OpenRath Agent Server",
        version: API_VERSION,
        description:
          "Durable runs of OpenRath workflows: runs, events (paged and SSE), interrupts, effects under review.",
      },
      components: { securitySchemes: { bearer: { type: "http", scheme: "bearer" } } },
    },
    transform: (input) => {
      const out = jsonSchemaTransform(input);
      const action = (input.route.config as { action?: string } | undefined)?.action;
      if (action) Object.assign(out.schema, { security: [{ bearer: [] }], "x-openrath-action": action });
      return out;
    },
    transformObject: jsonSchemaTransformObject,
  });
  await app.register(swaggerUi, { routePrefix: "/docs" });

  app.addHook("onSend", async (request, reply) => {
    reply.header("X-Request-ID", request.id);
    if (!reply.hasHeader("Cache-Control")) reply.header("Cache-Control", "no-store");
  });

  // Authentication and the route's grant, before the body is parsed.
  app.addHook("onRequest", async (request) => {
    const action = request.routeOptions.config.action;
    if (!action) return;
    try {
      request.principal = await authenticate(request.headers.authorization);
    } catch (error) {
      if (error instanceof AuthenticationFailed) {
        await access?.appendAudit([
          {
            ...auditOf(request, "request", null, "failed", { reason: error.reason }),
            tenantId: error.tenantId ?? "-",
            actor: error.actor ?? "anonymous",
          },
        ]);
      }
      throw error;
    }
    if (!allows(request.principal.grants, action)) {
      await access?.appendAudit([auditOf(request, "request", null, "denied", { reason: "missing_grant" })]);
      throw new ApiError(403, "forbidden", `The credentials lack the grant "${action}".`, { action });
    }
  });

  if (options.rateLimit !== false) {
    await app.register(rateLimit, {
      max: options.rateLimit?.max ?? 1200,
      timeWindow: options.rateLimit?.windowMs ?? 60_000,
      // Counted per tenant once authenticated (after the onRequest hook), else per address.
      hook: "preHandler",
      keyGenerator: (request: FastifyRequest) =>
        request.principal ? `tenant:${request.principal.tenantId}` : `ip:${request.ip}`,
      errorResponseBuilder: (_request, limit) =>
        new ApiError(429, "rate_limited", `Too many requests; retry after ${limit.after}.`),
    });
  }

  app.setErrorHandler(async (error, request, reply) => {
    let failure: ApiError;
    if (hasZodFastifySchemaValidationErrors(error)) {
      failure = new ApiError(400, "invalid_request", error.message, {
        issues: error.validation.map((issue) => ({ path: issue.instancePath, message: issue.message })),
      });
    } else if ((error as { code?: string }).code === "FST_ERR_CTP_BODY_TOO_LARGE") {
      failure = new ApiError(413, "payload_too_large", "The request body is over the server's limit.");
    } else if ((error as { statusCode?: number }).statusCode === 400 && !(error instanceof ApiError)) {
      failure = new ApiError(400, "invalid_request", (error as Error).message);
    } else if ((error as { statusCode?: number }).statusCode === 415) {
      failure = new ApiError(415, "invalid_request", (error as Error).message);
    } else {
      failure = toApiError(error);
    }
    if (failure.status >= 500 && failure.code === "internal")
      request.log.error({ err: error }, "request failed");
    reply.status(failure.status);
    if (failure.status === 429) reply.header("Retry-After", "60");
    return {
      error: {
        code: failure.code,
        message: failure.message,
        requestId: request.id,
        details: failure.details,
      },
    };
  });
  app.setNotFoundHandler(async (request, reply) => {
    reply.status(404);
    return {
      error: {
        code: "not_found",
        message: `No route ${request.method} ${request.url.split("?")[0]}.`,
        requestId: request.id,
      },
    };
  });

  await app.register(healthRoutes(context));
  await app.register(assistantRoutes(context));
  await app.register(runRoutes(context));
  await app.register(sessionRoutes(context));
  await app.register(eventRoutes(context));
  await app.register(interruptRoutes(context));
  await app.register(effectRoutes(context));
  await app.register(artifactRoutes(context));
  await app.register(memoryRoutes(context));
  await app.register(tokenRoutes(context));
  await app.register(whoamiRoutes);
  await app.register(auditRoutes(context));
  await app.register(scheduleRoutes(context));
  await app.register(webhookRoutes(context));
  await app.register(queuedMessageRoutes(context));
  await app.register(studioRoutes);
  if (options.metrics !== false) await app.register(metricsRoutes(runtime.store, options.metrics ?? {}));
  app.get("/openapi.json", { schema: { hide: true } }, async () => app.swagger());
  return app;
}
