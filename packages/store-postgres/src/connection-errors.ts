import { DurableError } from "@openrath/runtime-durable/store";
import type pg from "pg";

/** Why a store could not be opened, as `details.reason` of its `store_unavailable` error. */
export type OpenFailureReason =
  | "unreachable"
  | "host_not_found"
  | "authentication_failed"
  | "database_not_found"
  | "permission_denied";

const SCHEMES = ["postgres:", "postgresql:", "socket:"];
const URL_SHAPE = "postgres://[user[:password]@]host[:port]/database";
const MAX_SHOWN = 200;

/**
 * `text` with any password taken out: the URL's password and the values of query parameters that
 * carry one become `***`. Text that does not parse as a URL loses whatever stands between the first
 * `:` of its user part and its last `@`, so a malformed URL cannot leak its password either.
 */
export function redactUrl(text: string): string {
  const shown = (s: string) => (s.length > MAX_SHOWN ? `${s.slice(0, MAX_SHOWN)}…` : s);
  const parsed = parseUrl(text);
  // An "@" in the path is likely a password with an unencoded "/" in it: the text rule below.
  if (parsed && text.includes("//") && !parsed.pathname.includes("@")) {
    if (parsed.password) parsed.password = "***";
    for (const key of [...parsed.searchParams.keys()]) {
      if (/pass|secret|token/i.test(key)) parsed.searchParams.set(key, "***");
    }
    return shown(parsed.href.replace(/@___dummy___\//i, "@/"));
  }
  const at = text.lastIndexOf("@");
  if (at < 0) return shown(text);
  const scheme = text.indexOf("://");
  const start = scheme >= 0 && scheme < at ? scheme + 3 : 0;
  const colon = text.slice(start, at).indexOf(":");
  return shown(colon < 0 ? text : `${text.slice(0, start + colon)}:***${text.slice(at)}`);
}

/** The URL as `pg-connection-string` reads it (spaces encoded, an empty host allowed). */
function parseUrl(text: string): URL | undefined {
  const encoded = / |%[^a-f0-9]|%[a-f0-9][^a-f0-9]/i.test(text)
    ? encodeURI(text).replace(/%25(\d\d)/g, "%$1")
    : text;
  try {
    return new URL(encoded);
  } catch {
    try {
      return new URL(encoded.replace("@/", "@___DUMMY___/"));
    } catch {
      return undefined;
    }
  }
}

function invalidUrl(shown: string, problem: string): DurableError {
  return new DurableError(
    "invalid_argument",
    `The PostgreSQL connection string ${JSON.stringify(shown)} is not valid: ${problem}. Use ${URL_SHAPE}.`,
    { details: { url: shown, problem } },
  );
}

/**
 * Checks a connection string before anything connects (a malformed one would otherwise reach DNS
 * as a host name) and returns it with its password taken out, for messages.
 *
 * @throws {DurableError} `invalid_argument` for text that is not a URL, a scheme other than
 *   `postgres:`, `postgresql:` or `socket:`, or a port outside 1 to 65535.
 */
export function checkConnectionString(connectionString: unknown): string {
  if (typeof connectionString !== "string" || connectionString.trim() === "") {
    throw new DurableError(
      "invalid_argument",
      `A PostgreSQL connection string must be a non-empty string, got ${connectionString === "" ? "an empty string" : typeof connectionString}. Use ${URL_SHAPE}.`,
      { details: { problem: "not a string" } },
    );
  }
  // pg's own form for a socket directory: "/var/run/postgresql dbname" (no password in it).
  if (connectionString.startsWith("/")) return connectionString;
  const shown = redactUrl(connectionString);
  const port = /^[^:/?#]+:\/\/(?:[^/?#]*@)?(?:\[[^\]]*\]|[^:/?#@]*):(\d+)(?:[/?#]|$)/.exec(
    connectionString,
  )?.[1];
  if (port !== undefined && (Number(port) < 1 || Number(port) > 65535)) {
    throw invalidUrl(shown, `port ${port} is out of range (1 to 65535)`);
  }
  const url = parseUrl(connectionString);
  if (!url || !connectionString.includes("://")) throw invalidUrl(shown, "it is not a URL");
  if (!SCHEMES.includes(url.protocol)) {
    throw invalidUrl(shown, `the scheme ${JSON.stringify(url.protocol)} is not postgres: or postgresql:`);
  }
  return shown;
}

/** Where a pool connects, for messages, and the passwords to keep out of them. */
export interface ConnectionTarget {
  /** Its connection string without the password, or a URL made of its separate settings. */
  readonly url: string;
  /** Every password the settings carry (scrubbed from driver messages). */
  readonly secrets: readonly string[];
}

/**
 * Where a pool connects: its connection string (checked, see {@link checkConnectionString})
 * without the password, or else a URL made from its separate settings and pg's environment
 * defaults (never with the password).
 *
 * @throws {DurableError} `invalid_argument` for a malformed connection string.
 */
export function connectionTarget(config: pg.PoolConfig): ConnectionTarget {
  const secrets = typeof config.password === "string" ? [config.password] : [];
  if (config.connectionString !== undefined) {
    const url = checkConnectionString(config.connectionString);
    const parsed = parseUrl(config.connectionString);
    if (parsed?.password) secrets.push(parsed.password, decodeURIComponent(parsed.password));
    const inQuery = parsed?.searchParams.get("password");
    if (inQuery) secrets.push(inQuery);
    return { url, secrets };
  }
  const env = process.env;
  const user = config.user ?? env.PGUSER ?? env.USER ?? "";
  const host = config.host ?? env.PGHOST ?? "localhost";
  const port = config.port ?? env.PGPORT ?? 5432;
  const database = config.database ?? env.PGDATABASE ?? user;
  const authority = host.includes(":") && !host.startsWith("/") ? `[${host}]` : host;
  const url = `postgres://${user ? `${encodeURIComponent(user)}@` : ""}${authority}:${port}/${database}`;
  return { url, secrets };
}

interface Classified {
  readonly reason: OpenFailureReason;
  readonly retryable: boolean;
  readonly hint: string;
}

const UNREACHABLE = ["ECONNREFUSED", "ECONNRESET", "EPIPE", "ETIMEDOUT", "EHOSTUNREACH", "ENETUNREACH"];

function classify(code: string, message: string, detail: string): Classified | undefined {
  if (UNREACHABLE.includes(code) || ["57P01", "57P02", "57P03", "08000", "08001", "08006"].includes(code))
    return { reason: "unreachable", retryable: true, hint: "Check that the server runs and listens there." };
  if (/timeout|Connection terminated|connection is closed/i.test(message))
    return { reason: "unreachable", retryable: true, hint: "Check that the server runs and listens there." };
  if (code === "ENOTFOUND" || code === "EAI_AGAIN" || code === "EAI_NONAME")
    return {
      reason: "host_not_found",
      retryable: code === "EAI_AGAIN",
      hint: "Check the host name in the URL.",
    };
  if (code === "28P01" || code === "28000" || /SASL|password must be a string|client password/i.test(message))
    return {
      reason: "authentication_failed",
      retryable: false,
      hint: "Check the user and password (in the URL or the pool's settings) and the server's pg_hba.conf.",
    };
  if (code === "3D000")
    return {
      reason: "database_not_found",
      retryable: false,
      hint: "Create the database, or fix its name in the URL.",
    };
  // The same code is a refused DDL statement during migration; only the login's detail says CONNECT.
  if (code === "42501" && /CONNECT privilege/i.test(detail))
    return {
      reason: "permission_denied",
      retryable: false,
      hint: "Grant the role CONNECT on the database.",
    };
  return undefined;
}

/**
 * The error to throw when opening the store over `target` failed with `error`: a failure to
 * connect, log in or find the database becomes `store_unavailable` naming the target (without its
 * password) and, in `details.reason`, which of them it was; anything else is returned unchanged.
 * The target's passwords are scrubbed from the driver's message in case it ever quotes one.
 */
export function openFailure(error: unknown, target: ConnectionTarget): unknown {
  // The store maps connection errors to store_unavailable already; classify its cause.
  const driver =
    DurableError.isInstance(error, "store_unavailable") && (error as Error).cause !== undefined
      ? (error as Error).cause
      : error;
  if (DurableError.isInstance(driver)) return error;
  const e = driver as { code?: unknown; message?: unknown; detail?: unknown };
  const code = typeof e?.code === "string" ? e.code : "";
  let message = typeof e?.message === "string" ? e.message : String(driver);
  const found = classify(code, message, typeof e?.detail === "string" ? e.detail : "");
  if (!found) return error;
  for (const secret of target.secrets) if (secret) message = message.replaceAll(secret, "***");
  return new DurableError(
    "store_unavailable",
    `Cannot open the PostgreSQL store at ${target.url}: ${message.replace(/\.$/, "")}. ${found.hint}`,
    {
      cause: driver,
      details: { url: target.url, reason: found.reason, code, retryable: found.retryable },
    },
  );
}
