import { createHash, timingSafeEqual } from "node:crypto";
import type { IncomingMessage, ServerResponse } from "node:http";
import { OpenRathError } from "@openrath/core";

/** What the HTTP guard admits, checked and normalized by {@link guardSettings}. */
export interface GuardSettings {
  /** Origins (`scheme://host[:port]`) whose browser pages may call the server. */
  readonly origins: ReadonlySet<string>;
  /** SHA-256 of the bearer token every request must carry, when one is set. */
  readonly tokenDigest: Buffer | undefined;
}

// RFC 6750 `b64token`: what may follow "Bearer " without quoting.
const B64TOKEN = /^[A-Za-z0-9\-._~+/]+=*$/;
const MIN_TOKEN_CHARS = 16;

const CORS_ALLOW_HEADERS = "authorization, content-type, last-event-id, mcp-protocol-version, mcp-session-id";
const CORS_EXPOSE_HEADERS = "mcp-protocol-version, mcp-session-id, www-authenticate";

const digest = (text: string) => createHash("sha256").update(text, "utf8").digest();

function invalid(message: string, details: Record<string, unknown>): never {
  throw new OpenRathError("invalid_argument", `serveWorkflowAsMcp: ${message}`, { details });
}

/**
 * Checks the `allowedOrigins` and `bearerToken` options.
 *
 * @throws {OpenRathError} `invalid_argument` naming the bad entry.
 */
export function guardSettings(allowedOrigins: unknown, bearerToken: unknown): GuardSettings {
  const origins = new Set<string>();
  if (allowedOrigins !== undefined) {
    if (!Array.isArray(allowedOrigins)) {
      invalid(`allowedOrigins must be an array of origins such as "https://app.example".`, {
        allowedOrigins,
      });
    }
    for (const entry of allowedOrigins as unknown[]) origins.add(checkOrigin(entry));
  }
  if (bearerToken === undefined) return { origins, tokenDigest: undefined };
  if (
    typeof bearerToken !== "string" ||
    bearerToken.length < MIN_TOKEN_CHARS ||
    !B64TOKEN.test(bearerToken)
  ) {
    invalid(
      `bearerToken must be a string of at least ${MIN_TOKEN_CHARS} characters from A-Z a-z 0-9 - . _ ~ + / (then any "=" padding), such as randomBytes(32).toString("base64url"); got ${typeof bearerToken === "string" ? `${bearerToken.length} characters that do not fit` : typeof bearerToken}.`,
      { option: "bearerToken" },
    );
  }
  return { origins, tokenDigest: digest(bearerToken) };
}

/** An origin as browsers send it in `Origin`: `scheme://host[:port]`, lower-case, no default port. */
function checkOrigin(entry: unknown): string {
  let url: URL | undefined;
  try {
    url = typeof entry === "string" ? new URL(entry) : undefined;
  } catch {
    url = undefined;
  }
  const bare =
    url !== undefined &&
    (url.protocol === "http:" || url.protocol === "https:") &&
    url.username === "" &&
    url.password === "" &&
    url.pathname === "/" &&
    url.search === "" &&
    url.hash === "";
  if (!bare) {
    invalid(
      `allowedOrigins entry ${JSON.stringify(entry)} is not an origin: give scheme, host and port only, such as "https://app.example" or "http://localhost:5173".`,
      { entry },
    );
  }
  return url!.origin;
}

function refuse(
  res: ServerResponse,
  status: number,
  message: string,
  headers: Record<string, string> = {},
): true {
  res.writeHead(status, { "content-type": "application/json", ...headers });
  res.end(JSON.stringify({ jsonrpc: "2.0", error: { code: -32000, message }, id: null }));
  return true;
}

/**
 * Runs the checks every request passes before MCP sees it, in this order: `Host` is loopback at
 * our port (DNS rebinding), `Origin`, when present, is allowed (a browser page of another site,
 * also DNS rebinding), then the bearer token. Writes the refusal and returns `true` when the
 * request is refused or fully answered (a CORS preflight of an allowed origin).
 */
export function guardRequest(
  req: IncomingMessage,
  res: ServerResponse,
  hosts: ReadonlySet<string>,
  settings: GuardSettings,
): boolean {
  if (!hosts.has(req.headers.host ?? "")) {
    return refuse(res, 403, `Host ${JSON.stringify(req.headers.host)} is not allowed.`);
  }
  const origin = req.headers.origin;
  if (origin !== undefined) {
    if (!settings.origins.has(origin)) {
      return refuse(
        res,
        403,
        `Origin ${JSON.stringify(origin)} is not allowed: this server answers browser pages only from the origins in its allowedOrigins option.`,
      );
    }
    // An allowed browser page must be able to read the answer, the refusal below included.
    res.setHeader("access-control-allow-origin", origin);
    res.setHeader("access-control-expose-headers", CORS_EXPOSE_HEADERS);
    res.setHeader("vary", "Origin");
    if (req.method === "OPTIONS") {
      // A preflight carries no credentials: it is answered before the token check.
      res.writeHead(204, {
        "access-control-allow-methods": "GET, POST, DELETE",
        "access-control-allow-headers": CORS_ALLOW_HEADERS,
        "access-control-max-age": "600",
      });
      res.end();
      return true;
    }
  }
  if (settings.tokenDigest === undefined) return false;
  const match = /^Bearer +(\S+) *$/i.exec(req.headers.authorization ?? "");
  if (!match) {
    return refuse(res, 401, "Unauthorized: send Authorization: Bearer <token>.", {
      "www-authenticate": 'Bearer realm="mcp"',
    });
  }
  // Digests of equal length, compared in constant time: neither the token nor its length leaks.
  if (!timingSafeEqual(digest(match[1]!), settings.tokenDigest)) {
    return refuse(res, 401, "Unauthorized: the bearer token is not valid.", {
      "www-authenticate": 'Bearer realm="mcp", error="invalid_token"',
    });
  }
  return false;
}
