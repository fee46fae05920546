/**
 * `@openrath/server`: the Agent Server, an HTTP API in front of a {@link DurableRuntime}. Every
 * route is validated by zod schemas and described by the OpenAPI 3.1 document they generate
 * (`/openapi.json`, committed as `deploy/openapi.json`).
 */
export {
  AuthenticationFailed,
  type Authenticator,
  type AuthOptions,
  hashTokenSecret,
  newTokenSecret,
  type Principal,
  TOKEN_PREFIX,
} from "./auth.js";
export { ApiError, type ServerErrorCode } from "./errors.js";
export { ACTIONS, type Action, allows, unknownGrants } from "./grants.js";
export {
  LOG_LEVELS,
  type ServerLoggerOptions,
  type ServerLogLevel,
  serverLogger,
  workerLogOf,
} from "./logging.js";
export {
  type PrometheusRegistry,
  prometheusRegistry,
  type ServerMetricsOptions,
} from "./routes/metrics.js";
export {
  auditOut as toApiAudit,
  effectOut as toApiEffect,
  eventOut as toApiEvent,
  interruptOut as toApiInterrupt,
  runOut as toApiRun,
  tokenOut as toApiToken,
} from "./schemas.js";
export { API_VERSION, createServer, type ServerOptions } from "./server.js";
