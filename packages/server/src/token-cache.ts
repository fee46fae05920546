import { BoundedMap } from "@openrath/core/backend";
import type { TokenRecord } from "@openrath/runtime-durable/store";

/** The default time a token lookup is reused, in milliseconds. */
export const TOKEN_CACHE_MS = 5000;
const LIMIT = 10_000;

/**
 * Token records by secret hash, each reused for `ttlMs` so a request does not read the store:
 * a revocation through this server evicts at once, one made elsewhere is seen within `ttlMs`
 * (see ADR 0027, Limits). Bounded: the oldest entry goes first.
 */
export class TokenCache {
  private readonly entries: BoundedMap<string, { readonly token: TokenRecord; readonly until: number }>;

  constructor(
    readonly ttlMs: number,
    private readonly now: () => number = Date.now,
    limit = LIMIT,
  ) {
    this.entries = new BoundedMap(limit);
  }

  /** The record for `secretHash`, from the cache while fresh, else from `find` (then kept). */
  async lookup(
    secretHash: string,
    find: (secretHash: string) => Promise<TokenRecord | undefined>,
  ): Promise<TokenRecord | undefined> {
    const cached = this.entries.get(secretHash);
    if (cached && cached.until > this.now()) return cached.token;
    this.entries.delete(secretHash);
    const token = await find(secretHash);
    // Unknown secrets are not kept: a token made a moment later works at once.
    if (token) this.entries.set(secretHash, { token, until: this.now() + this.ttlMs });
    return token;
  }

  /** Drops every entry of the token `tokenId` (after its revocation). */
  evict(tokenId: string): void {
    for (const [hash, entry] of this.entries) if (entry.token.id === tokenId) this.entries.delete(hash);
  }
}
