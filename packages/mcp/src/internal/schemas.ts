import * as z from "zod";

const positiveMs = (fallback: number) =>
  z
    .number({ error: "it must be a positive number of milliseconds" })
    .positive("it must be a positive number of milliseconds")
    .default(fallback);

/** The options of `mcpTools`, with their defaults. */
export const McpToolsOptionsSchema = z.strictObject({
  prefix: z.string().optional(),
  include: z.array(z.string()).optional(),
  timeoutMs: positiveMs(60_000),
  connectTimeoutMs: positiveMs(30_000),
  name: z.string().min(1, "it must be a non-empty string").optional(),
  parallel: z.boolean().optional(),
  maxResultChars: z.int().positive().optional(),
});

/** A stdio server: a command to spawn. */
export const McpStdioServerSchema = z.strictObject(
  {
    command: z
      .string({ error: 'a stdio server needs a non-empty "command" (such as process.execPath)' })
      .min(1, 'a stdio server needs a non-empty "command" (such as process.execPath)'),
    args: z.array(z.string()).optional(),
    env: z.record(z.string(), z.string()).optional(),
    cwd: z.string().optional(),
    stderr: z.enum(["pipe", "inherit", "ignore"]).optional(),
  },
  { error: "the server must be { command, args?, env?, cwd?, stderr? } or { url, headers? }" },
);

/** A Streamable HTTP server: its endpoint. */
export const McpHttpServerSchema = z.strictObject({
  url: z
    .string({ error: 'it must be the MCP endpoint, such as "http://127.0.0.1:3001/mcp"' })
    .refine(
      (url) => URL.canParse(url) && ["http:", "https:"].includes(new URL(url).protocol),
      'it must be an http: or https: URL (Streamable HTTP), such as "http://127.0.0.1:3001/mcp"',
    ),
  headers: z.record(z.string(), z.string()).optional(),
});

/** An origin as browsers send it in `Origin` (`scheme://host[:port]`, lower-case, no default port), or `undefined`. */
export function originOf(entry: string): string | undefined {
  if (!URL.canParse(entry)) return undefined;
  const url = new URL(entry);
  const bare =
    (url.protocol === "http:" || url.protocol === "https:") &&
    url.username === "" &&
    url.password === "" &&
    url.pathname === "/" &&
    url.search === "" &&
    url.hash === "";
  return bare ? url.origin : undefined;
}

// RFC 6750 `b64token`: what may follow "Bearer " without quoting.
const B64TOKEN = /^[A-Za-z0-9\-._~+/]+=*$/;
const MIN_TOKEN_CHARS = 16;

/** The Streamable HTTP transport of `serveWorkflowAsMcp`, its origins normalized. */
const HttpTransportSchema = z.strictObject({
  port: z
    .int({ error: "it must be an integer from 0 (any free port) to 65535" })
    .min(0, "it must be an integer from 0 (any free port) to 65535")
    .max(65_535, "it must be an integer from 0 (any free port) to 65535"),
  host: z.literal("127.0.0.1", { error: "it is not offered: the server binds 127.0.0.1 only" }).optional(),
  allowedOrigins: z
    .array(
      z
        .string({ error: 'it must be an origin such as "https://app.example"' })
        .refine(
          (entry) => originOf(entry) !== undefined,
          'it is not an origin: give scheme, host and port only, such as "https://app.example" or "http://localhost:5173"',
        )
        .transform((entry) => originOf(entry)!),
      { error: 'it must be an array of origins such as "https://app.example"' },
    )
    .default([]),
  bearerToken: z
    .string({ error: "it must be a string" })
    .refine(
      (token) => token.length >= MIN_TOKEN_CHARS && B64TOKEN.test(token),
      `it must be at least ${MIN_TOKEN_CHARS} characters from A-Z a-z 0-9 - . _ ~ + / (then any "=" padding), such as randomBytes(32).toString("base64url")`,
    )
    .optional(),
});

/** The options of `serveWorkflowAsMcp`, with their defaults. */
export const ServeWorkflowOptionsSchema = z.strictObject({
  name: z.string().min(1, "it must be a non-empty string").optional(),
  version: z.string().min(1, "it must be a non-empty string").default("0.1.0"),
  agents: z.boolean().optional(),
  transport: z
    .union([z.literal("stdio"), HttpTransportSchema], {
      error: 'it must be "stdio" or { port, allowedOrigins?, bearerToken? }',
    })
    .default("stdio"),
});
