import { createHash, randomBytes } from "node:crypto";
import type { AccessStoreV1 } from "@openrath/runtime-durable/store";
import { createLocalJWKSet, createRemoteJWKSet, type JSONWebKeySet, type JWTPayload, jwtVerify } from "jose";
import { ApiError } from "./errors.js";
import type { TokenCache } from "./token-cache.js";

/** Who a request acts as, once authenticated: the scope every object it touches is checked against. */
export interface Principal {
  readonly tenantId: string;
  /** The one project it may see, or `null` for every project of its tenant. */
  readonly projectId: string | null;
  readonly grants: readonly string[];
  /** For audit records: `token:<id>`, `jwt:<subject>` or `local`. */
  readonly actor: string;
  /** When the credentials stop authenticating (Unix ms), or `null` for never. */
  readonly expiresAt?: number | null;
  /** The store token presented, when it is one: what its holder may read of it (no secret). */
  readonly token?: { readonly id: string; readonly name: string; readonly createdAt: number };
}

/**
 * How the server authenticates requests.
 * - `tokens`: bearer tokens made by `openrath tokens create` (or `POST /v1/tokens`), kept in the
 *   store as SHA-256 hashes with grants, a tenant, a project, an expiry and a revocation time.
 * - `jwt`: JWTs from the operator's identity provider, verified against its JWKS (by URL, or a
 *   key set given inline), issuer and audience; the tenant, project and grants come from claims.
 * - `local`: no credentials; every request acts as one tenant with the given grants (default all).
 *   For a server on the loopback interface of a developer's machine only: `createServer` refuses
 *   it on any other host.
 */
export type AuthOptions =
  | { readonly mode: "tokens" }
  | {
      readonly mode: "jwt";
      readonly jwksUrl?: string;
      readonly jwks?: JSONWebKeySet;
      readonly issuer: string;
      readonly audience: string;
      /** The claim naming the tenant (default `tenant`). */
      readonly tenantClaim?: string;
      /** The claim naming the project (default `project`; absent means every project). */
      readonly projectClaim?: string;
      /** The claim holding grants: an array, or a space-separated string (default `grants`). */
      readonly grantsClaim?: string;
    }
  | { readonly mode: "local"; readonly tenantId?: string; readonly grants?: readonly string[] };

/** The prefix of every token secret, so a leaked one is easy to recognise and scan for. */
export const TOKEN_PREFIX = "ort_";

/** A new token secret: the prefix and 32 random bytes. Shown once; only its hash is stored. */
export function newTokenSecret(): string {
  return TOKEN_PREFIX + randomBytes(32).toString("base64url");
}

/** The stored form of a token secret. */
export function hashTokenSecret(secret: string): string {
  return createHash("sha256").update(secret, "utf8").digest("hex");
}

/** A failed authentication: 401 with the reason as a detail (also the audit record's reason). */
export class AuthenticationFailed extends ApiError {
  constructor(
    readonly reason: string,
    message: string,
    /** The tenant the credentials named, when it is known (for the audit record). */
    readonly tenantId?: string,
    readonly actor?: string,
  ) {
    super(401, "unauthenticated", message, { reason });
  }
}

/** Turns an `Authorization` header into a {@link Principal}, or throws {@link AuthenticationFailed}. */
export type Authenticator = (authorization: string | undefined) => Promise<Principal>;

function bearer(authorization: string | undefined): string {
  if (authorization === undefined || authorization === "")
    throw new AuthenticationFailed(
      "missing_credentials",
      "Send a bearer token: `Authorization: Bearer <token>`.",
    );
  const match = /^Bearer ([^\s]+)$/i.exec(authorization.trim());
  if (!match?.[1])
    throw new AuthenticationFailed(
      "malformed_credentials",
      "The Authorization header is not `Bearer <token>`.",
    );
  return match[1];
}

function tokenAuthenticator(
  access: AccessStoreV1,
  now: () => number,
  cache: TokenCache | undefined,
): Authenticator {
  const find = (hash: string) => access.findToken(hash);
  return async (authorization) => {
    const secret = bearer(authorization);
    if (!secret.startsWith(TOKEN_PREFIX) || secret.length > 200)
      throw new AuthenticationFailed("unknown_token", "The token is not known.");
    const hash = hashTokenSecret(secret);
    // Revocation and expiry are checked on every request, against the cached record too.
    const token = cache ? await cache.lookup(hash, find) : await find(hash);
    if (!token) throw new AuthenticationFailed("unknown_token", "The token is not known.");
    const actor = `token:${token.id}`;
    if (token.revokedAt !== null)
      throw new AuthenticationFailed("token_revoked", "The token was revoked.", token.tenantId, actor);
    if (token.expiresAt !== null && token.expiresAt <= now())
      throw new AuthenticationFailed("token_expired", "The token has expired.", token.tenantId, actor);
    return {
      tenantId: token.tenantId,
      projectId: token.projectId,
      grants: token.grants,
      actor,
      expiresAt: token.expiresAt,
      token: { id: token.id, name: token.name, createdAt: token.createdAt },
    };
  };
}

function claimString(payload: JWTPayload, claim: string): string | undefined {
  const value = payload[claim];
  return typeof value === "string" && value !== "" ? value : undefined;
}

function jwtAuthenticator(options: Extract<AuthOptions, { mode: "jwt" }>): Authenticator {
  const keys = options.jwks
    ? createLocalJWKSet(options.jwks)
    : options.jwksUrl
      ? createRemoteJWKSet(new URL(options.jwksUrl))
      : undefined;
  if (!keys) throw new ApiError(500, "internal", "JWT authentication needs `jwksUrl` or `jwks`.");
  return async (authorization) => {
    const jwt = bearer(authorization);
    let payload: JWTPayload;
    try {
      ({ payload } = await jwtVerify(jwt, keys, { issuer: options.issuer, audience: options.audience }));
    } catch (error) {
      const expired = (error as { code?: string }).code === "ERR_JWT_EXPIRED";
      throw new AuthenticationFailed(
        expired ? "token_expired" : "invalid_jwt",
        expired ? "The JWT has expired." : "The JWT did not verify.",
      );
    }
    const tenantId = claimString(payload, options.tenantClaim ?? "tenant");
    const actor = `jwt:${payload.sub ?? "unknown"}`;
    if (!tenantId)
      throw new AuthenticationFailed("missing_tenant", "The JWT names no tenant.", undefined, actor);
    const raw = payload[options.grantsClaim ?? "grants"];
    const grants = Array.isArray(raw)
      ? raw.filter((grant): grant is string => typeof grant === "string")
      : typeof raw === "string"
        ? raw.split(" ").filter((grant) => grant !== "")
        : [];
    return {
      tenantId,
      projectId: claimString(payload, options.projectClaim ?? "project") ?? null,
      grants,
      actor,
      expiresAt: typeof payload.exp === "number" ? payload.exp * 1000 : null,
    };
  };
}

/**
 * The authenticator for `options` (`access` is the store's, for `tokens`; `cache`, when given,
 * keeps token lookups for a few seconds).
 */
export function authenticator(
  options: AuthOptions,
  access: AccessStoreV1 | undefined,
  now: () => number = Date.now,
  cache?: TokenCache,
): Authenticator {
  switch (options.mode) {
    case "tokens":
      if (!access)
        throw new ApiError(500, "internal", "Token authentication needs a store with `capabilities.access`.");
      return tokenAuthenticator(access, now, cache);
    case "jwt":
      return jwtAuthenticator(options);
    case "local": {
      const principal: Principal = {
        tenantId: options.tenantId ?? "default",
        projectId: null,
        grants: options.grants ?? ["*"],
        actor: "local",
        expiresAt: null,
      };
      return async () => principal;
    }
  }
}
