import { createHash, timingSafeEqual } from "node:crypto";
import type { IncomingMessage, ServerResponse } from "node:http";

/** What the HTTP guard admits. */
export interface GuardSettings {
  /** Origins (`scheme://host[:port]`) whose browser pages may call the server. */
  readonly origins: ReadonlySet<string>;
  /** SHA-256 of the bearer token every request must carry, when one is set. */
  readonly tokenDigest: Buffer | undefined;
}

const CORS_ALLOW_HEADERS = "authorization, content-type, last-event-id, mcp-protocol-version, mcp-session-id";
const CORS_EXPOSE_HEADERS = "mcp-protocol-version, mcp-session-id, www-authenticate";

const digest = (text: string) => createHash("sha256").update(text, "utf8").digest();

/**
 * The guard for `allowedOrigins` (already normalized by the options' schema) and `bearerToken`,
 * of which only a digest is kept.
 */
export function guardSettings(
  allowedOrigins: readonly string[],
  bearerToken: string | undefined,
): GuardSettings {
  return {
    origins: new Set(allowedOrigins),
    tokenDigest: bearerToken === undefined ? undefined : digest(bearerToken),
  };
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
