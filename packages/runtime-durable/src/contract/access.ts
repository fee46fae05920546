import type { JsonObject } from "@openrath/core";
import type { Page } from "./journal-records.js";

/**
 * What an audit record says happened: `allowed` (the action was done), `denied` (a grant or a
 * scope refused it), `failed` (authentication failed, or the action was refused by the store).
 */
export type AuditOutcome = "allowed" | "denied" | "failed";

/** An audit record to write. The store adds its id and the database time. */
export interface AuditInput {
  /** The tenant the action was for; `"-"` when the caller could not be identified. */
  readonly tenantId: string;
  /** Who acted: a token id (`token:<id>`), a JWT subject (`jwt:<sub>`), or `"anonymous"`. */
  readonly actor: string;
  /** The action, such as `run.create` or `interrupt.decide` (the grant it needs). */
  readonly action: string;
  readonly outcome: AuditOutcome;
  /** What was acted on, such as `run` or `token`, and its id when it has one. */
  readonly resourceKind: string;
  readonly resourceId?: string | null;
  /** Why a denial or failure happened, as a stable code (`missing_grant`, `token_expired`). */
  readonly reason?: string | null;
  /** The request id of the HTTP request that made the record. */
  readonly requestId?: string | null;
  /** A small JSON object of extra facts (never secrets or message content). */
  readonly attributes?: JsonObject;
}

/** The trailing option of a mutation that can be audited in its own transaction. */
export interface Audited {
  /** Written in the same transaction as the change, and not at all when the change is refused. */
  readonly audit?: AuditInput;
}

/** A stored audit record: append-only. */
export interface AuditRecord extends AuditInput {
  /** Store-wide, increasing. */
  readonly id: number;
  readonly resourceId: string | null;
  readonly reason: string | null;
  readonly requestId: string | null;
  readonly attributes: JsonObject;
  /** Database time, epoch milliseconds. */
  readonly at: number;
}

/** A stored API token: the secret itself is never stored, only its SHA-256. */
export interface TokenRecord {
  readonly id: string;
  readonly tenantId: string;
  /** The project the token is limited to, or `null` for every project of its tenant. */
  readonly projectId: string | null;
  /** A label for people (`"ci"`, `"studio"`). */
  readonly name: string;
  /** The actions it may take (`run.read`, `run.*`, ...), as the server checks them. */
  readonly grants: readonly string[];
  readonly createdAt: number;
  /** After this time the token authenticates nothing; `null` for no expiry. */
  readonly expiresAt: number | null;
  /** When it was revoked, or `null`. */
  readonly revokedAt: number | null;
}

/** A token to store. */
export interface CreateTokenInput {
  readonly tenantId: string;
  readonly projectId?: string | null;
  readonly name: string;
  readonly grants: readonly string[];
  readonly expiresAt?: number | null;
  /** SHA-256 (lower-case hex) of the secret; unique. */
  readonly secretHash: string;
  /** Written in the same transaction as the token. */
  readonly audit?: AuditInput;
}

/** Filters of an audit listing (oldest first, keyset-paginated). */
export interface ListAuditQuery {
  readonly tenantId: string;
  readonly action?: string;
  readonly outcome?: AuditOutcome;
  /** The `nextCursor` of the previous page. */
  readonly cursor?: string;
  /** 1..500, default 100. */
  readonly limit?: number;
}

/**
 * Tokens and the audit log, version 1 (`store.access` when `capabilities.access` is true): what
 * an API server in front of the store needs to authenticate callers and to keep a record of what
 * they did. Mutations of the run store that take an `audit` input (submit, cancel, unpark, an
 * interrupt's decision, an effect's resolution) write that record in the same transaction as
 * the change, and write nothing when the change is refused.
 *
 * Errors are `DurableError`s: `invalid_argument`, `idempotency_conflict` (a secret hash stored
 * already).
 */
export interface AccessStoreV1 {
  readonly specVersion: "v1";
  createToken(input: CreateTokenInput): Promise<TokenRecord>;
  /** The token with this secret hash, revoked and expired ones included (so a caller can say why). */
  findToken(secretHash: string): Promise<TokenRecord | undefined>;
  /** The tenant's tokens, newest first (at most 1000). */
  listTokens(tenantId: string): Promise<TokenRecord[]>;
  /**
   * Revokes a token of the tenant (idempotent: revoking a revoked token keeps its first time).
   * `undefined` when the tenant has no such token.
   */
  revokeToken(tenantId: string, tokenId: string, audit?: AuditInput): Promise<TokenRecord | undefined>;
  /** Appends records on their own (denials, authentication failures, reads worth keeping). */
  appendAudit(records: readonly AuditInput[]): Promise<void>;
  listAudit(query: ListAuditQuery): Promise<Page<AuditRecord>>;
}
