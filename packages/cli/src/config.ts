import { OpenRathError } from "@openrath/core";
import { z } from "zod";

const list = z.string().transform((value) =>
  value
    .split(",")
    .map((item) => item.trim())
    .filter((item) => item !== ""),
);

/**
 * Every environment variable the `openrath` command reads, with its default and an example: one
 * schema that validates the environment and writes the configuration reference
 * (`docs/reference/configuration.md`). A command's flags win over these.
 */
export const configSchema = z.object({
  DATABASE_URL: z
    .string()
    .regex(/^postgres(ql)?:\/\//, "must be a postgres:// URL")
    .optional()
    .describe(
      "PostgreSQL for the run store; without it the embedded PGlite store under OPENRATH_STATE is used.",
    )
    .meta({ example: "postgres://openrath:secret@db:5432/openrath" }),
  OPENRATH_DB_SCHEMA: z
    .string()
    .regex(/^[a-z_][a-z0-9_]{0,62}$/, "must be a lower-case SQL identifier")
    .default("openrath")
    .describe("The PostgreSQL schema holding the store's tables (with DATABASE_URL).")
    .meta({ example: "openrath_staging" }),
  OPENRATH_STATE: z
    .string()
    .min(1)
    .default(".openrath")
    .describe(
      "The embedded store's directory (PGlite database and the demo's workspace), relative to where the command runs.",
    )
    .meta({ example: "/var/lib/openrath" }),
  REDIS_URL: z
    .string()
    .regex(/^rediss?:\/\//, "must be a redis:// or rediss:// URL")
    .optional()
    .describe(
      "Redis for the runtime's wake-ups and live events across processes (`serve`, `worker`); the store's own notifications are the fallback when it is down.",
    )
    .meta({ example: "redis://redis:6379" }),
  OPENRATH_S3_BUCKET: z
    .string()
    .min(3)
    .max(63)
    .optional()
    .describe(
      "An S3 bucket for large payloads (strings of 64 KiB and more in a run's chunks); without it the embedded store keeps them under OPENRATH_STATE/artifacts, and PostgreSQL keeps them in the database.",
    )
    .meta({ example: "openrath-artifacts" }),
  OPENRATH_S3_ENDPOINT: z
    .url()
    .optional()
    .describe("With OPENRATH_S3_BUCKET: an S3-compatible endpoint (path-style addressing); default AWS.")
    .meta({ example: "http://minio:9000" }),
  OPENRATH_S3_REGION: z
    .string()
    .min(1)
    .default("us-east-1")
    .describe("With OPENRATH_S3_BUCKET: the bucket's region.")
    .meta({ example: "eu-west-1" }),
  AWS_ACCESS_KEY_ID: z
    .string()
    .min(1)
    .optional()
    .describe("With OPENRATH_S3_BUCKET: the access key (else the AWS SDK's default credential chain).")
    .meta({ example: "AKIA…" }),
  AWS_SECRET_ACCESS_KEY: z
    .string()
    .min(1)
    .optional()
    .describe("With AWS_ACCESS_KEY_ID: its secret (never printed).")
    .meta({ example: "…" }),
  OPENRATH_MEMORY_DIR: z
    .string()
    .min(1)
    .optional()
    .describe(
      "The directory of the memory store `serve` fronts at /v1/memory (one process writes it); default OPENRATH_STATE/memory on the embedded store, none with DATABASE_URL.",
    )
    .meta({ example: "/var/lib/openrath/memory" }),
  PORT: z.coerce
    .number()
    .int()
    .min(0)
    .max(65_535)
    .default(8787)
    .describe("The port `openrath serve` listens on (`--port`).")
    .meta({ example: "8080" }),
  OPENRATH_HOST: z
    .string()
    .min(1)
    .default("127.0.0.1")
    .describe(
      "The address `openrath serve` listens on (`--host`), and `openrath worker`'s health endpoint (OPENRATH_WORKER_HEALTH_PORT).",
    )
    .meta({ example: "0.0.0.0" }),
  OPENRATH_AUTH: z
    .enum(["local", "tokens", "jwt"])
    .optional()
    .describe(
      "How `openrath serve` authenticates (`--auth`): default `local` on the embedded store and a loopback host, else `tokens`.",
    )
    .meta({ example: "jwt" }),
  OPENRATH_JWKS_URL: z
    .url()
    .optional()
    .describe("With OPENRATH_AUTH=jwt: the identity provider's JWKS.")
    .meta({ example: "https://id.example.com/.well-known/jwks.json" }),
  OPENRATH_JWT_ISSUER: z
    .string()
    .optional()
    .describe("With OPENRATH_AUTH=jwt: the issuer (`iss`) tokens must carry.")
    .meta({ example: "https://id.example.com/" }),
  OPENRATH_JWT_AUDIENCE: z
    .string()
    .optional()
    .describe("With OPENRATH_AUTH=jwt: the audience (`aud`) tokens must carry.")
    .meta({ example: "openrath" }),
  OPENRATH_CORS_ORIGINS: list
    .optional()
    .describe("Comma-separated origins allowed to call the API from a browser; CORS is off without it.")
    .meta({ example: "https://studio.example.com" }),
  OPENRATH_RATE_LIMIT: z.coerce
    .number()
    .int()
    .min(1)
    .default(1200)
    .describe("Requests per tenant per minute the API accepts.")
    .meta({ example: "600" }),
  OPENRATH_WORKER_CONCURRENCY: z.coerce
    .number()
    .int()
    .min(1)
    .max(256)
    .default(8)
    .describe("Runs a worker executes at once (`--concurrency`).")
    .meta({ example: "32" }),
  OPENRATH_WORKER_LEASE_MS: z.coerce
    .number()
    .int()
    .min(500)
    .max(3_600_000)
    .default(30_000)
    .describe(
      "How long a worker's claim on a run lasts between heartbeats: a worker that dies is replaced after at most this long.",
    )
    .meta({ example: "10000" }),
  OPENRATH_WORKER_HEALTH_PORT: z.coerce
    .number()
    .int()
    .min(0)
    .max(65_535)
    .optional()
    .describe(
      "`openrath worker` serves /health/live (its heartbeat ticks) and /health/ready (its store answers) on this port; off without it.",
    )
    .meta({ example: "8788" }),
  OPENRATH_WEBHOOKS_ALLOW_INTERNAL: z
    .enum(["0", "1", "false", "true"])
    .default("0")
    .transform((value) => value === "1" || value === "true")
    .describe(
      "Let workers deliver webhooks to internal addresses (loopback, private, link-local such as cloud metadata); off, a tenant's URL cannot reach into the network the workers run in.",
    )
    .meta({ example: "1" }),
  OPENRATH_TENANT: z
    .string()
    .min(1)
    .max(128)
    .default("default")
    .describe("The tenant the store-side commands (`runs`, `tokens`) act for (`--tenant`).")
    .meta({ example: "acme" }),
  OPENRATH_SERVER_URL: z
    .url()
    .optional()
    .describe(
      "The Agent Server the operator commands (`runs`, `interrupts`, `effects`, `tokens`) talk to (`--server`); without it they open the store.",
    )
    .meta({ example: "https://openrath.example.com" }),
  OPENRATH_TOKEN: z
    .string()
    .min(1)
    .optional()
    .describe("The bearer token the operator commands send to OPENRATH_SERVER_URL (never printed).")
    .meta({ example: "ort_…" }),
  OPENRATH_LOG_LEVEL: z
    .enum(["debug", "info", "warn", "error", "silent"])
    .default("info")
    .describe(
      "The level of the structured logs of `serve` and `worker` (the server's requests, the worker's events, the steps' `ctx.logger` lines) on standard error.",
    )
    .meta({ example: "warn" }),
  OPENRATH_LOG_FORMAT: z
    .enum(["auto", "json", "pretty"])
    .default("auto")
    .describe(
      "How `serve` and `worker` write their logs: one JSON object per line (`json`), coloured lines for reading (`pretty`), or pretty on a terminal and JSON otherwise (`auto`).",
    )
    .meta({ example: "json" }),
});

/** `--state`, else OPENRATH_STATE, resolved against where the command runs. */
export function stateDir(
  ctx: { resolve(path: string): string },
  config: Config,
  options: Readonly<Record<string, string | true | undefined>>,
): string {
  return ctx.resolve(typeof options.state === "string" ? options.state : config.OPENRATH_STATE);
}

/** The validated configuration. */
export type Config = z.output<typeof configSchema>;

/**
 * Reads the configuration from `env` (unknown variables are ignored).
 *
 * @throws {OpenRathError} `invalid_config`, naming each bad variable and what it must be.
 */
export function readConfig(env: Readonly<Record<string, string | undefined>>): Config {
  const known = Object.fromEntries(
    Object.keys(configSchema.shape)
      .filter((key) => env[key] !== undefined && env[key] !== "")
      .map((key) => [key, env[key]]),
  );
  const result = configSchema.safeParse(known);
  if (result.success) return result.data;
  const problems = result.error.issues.map((issue) => {
    const key = String(issue.path[0]);
    // A connection string holds a password: never echo it.
    const shown =
      key === "DATABASE_URL" || key === "OPENRATH_TOKEN" ? "" : ` (got ${JSON.stringify(env[key])})`;
    return `${key} ${issue.message}${shown}`;
  });
  throw new OpenRathError("invalid_config", `Bad configuration: ${problems.join("; ")}`, {
    details: { variables: result.error.issues.map((issue) => String(issue.path[0])) },
  });
}

/** The configuration reference as Markdown, from {@link configSchema}. */
export function configReference(): string {
  const rows = Object.entries(configSchema.shape).map(([name, schema]) => {
    const json = z.toJSONSchema(schema, { io: "input", unrepresentable: "any" }) as {
      description?: string;
      default?: unknown;
      example?: unknown;
    };
    const meta = schema.meta() as { example?: string; description?: string } | undefined;
    const fallback = json.default === undefined ? "—" : `\`${String(json.default)}\``;
    return `| \`${name}\` | ${fallback} | \`${meta?.example ?? ""}\` | ${schema.description ?? meta?.description ?? ""} |`;
  });
  return [
    "# Configuration reference",
    "",
    "Generated from `configSchema` in `packages/cli/src/config.ts` (`pnpm --filter @openrath/cli config-docs`);",
    "a test fails when this page and the schema differ. Flags of a command win over the environment.",
    "",
    "| Variable | Default | Example | What it does |",
    "|---|---|---|---|",
    ...rows,
    "",
  ].join("\n");
}
