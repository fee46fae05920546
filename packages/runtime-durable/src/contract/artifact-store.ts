import type { Readable } from "node:stream";

/**
 * What {@link ArtifactStoreV1.put} accepts: bytes, a string (stored as UTF-8), or a stream of
 * either — a Node `Readable`, a web `ReadableStream`, any (async) iterable of chunks. Streams are
 * read chunk by chunk and never collected whole.
 */
export type ArtifactBody =
  | string
  | Uint8Array
  | ReadableStream<Uint8Array>
  | AsyncIterable<Uint8Array | string>
  | Iterable<Uint8Array | string>;

/** An artifact as {@link ArtifactStoreV1.put} stored it. */
export interface ArtifactInfo {
  /** The tenant the object belongs to. */
  readonly tenant: string;
  /** Lower-case hexadecimal SHA-256 of the content: the object's name. */
  readonly digest: string;
  /** Content length in bytes. */
  readonly size: number;
  /** `artifact://<tenant>/<digest>`, the form to store in a row that refers to the object. */
  readonly uri: string;
}

/** An artifact as {@link ArtifactStoreV1.stat} and {@link ArtifactStoreV1.list} report it. */
export interface ArtifactStat extends ArtifactInfo {
  /**
   * When the content was last put, in Unix epoch milliseconds (second resolution on S3). A put of
   * content that is already stored moves it forward, so a garbage collector's grace period counts
   * from the latest put.
   */
  readonly modifiedAt: number;
}

/** Options of {@link ArtifactStoreV1.put}. */
export interface ArtifactPutOptions {
  /**
   * The digest the content must have. When given, a body that hashes to anything else is refused
   * with `artifact_digest_mismatch` and nothing becomes visible. A store may also skip reading the
   * body when the object already exists (a stream is then left unconsumed: destroy it if you own
   * it): the filesystem store always does, the S3 store when `size` is not declared or is above its
   * multipart threshold (for smaller content one upload is cheaper than asking first). Giving it
   * also lets a store write the final object directly instead of staging it.
   */
  readonly digest?: string;
  /** The length in bytes the content must have; a body of another length is `artifact_digest_mismatch`. */
  readonly size?: number;
  /** Aborts the put: it rejects with `artifact_aborted` and nothing becomes visible. */
  readonly signal?: AbortSignal;
}

/** Options of {@link ArtifactStoreV1.get}. */
export interface ArtifactGetOptions {
  /** Aborts the read: the stream is destroyed with `artifact_aborted`. */
  readonly signal?: AbortSignal;
}

/** Options of {@link ArtifactStoreV1.list}. */
export interface ArtifactListOptions {
  /** Only this tenant's objects (default: every tenant's). */
  readonly tenant?: string;
}

/** Options of {@link ArtifactStoreV1.sweepIncomplete}. */
export interface ArtifactSweepOptions {
  /**
   * Leftovers younger than this many milliseconds are kept, since they may belong to a put still
   * in progress in another process (default one hour).
   */
  readonly olderThanMs?: number;
}

/**
 * What an artifact store says about itself. The conformance suite checks every claim it can
 * observe; the runtime reads `distributed` to warn about a store other machines cannot reach.
 */
export interface ArtifactCapabilities {
  /** The largest object in bytes a put accepts; larger content is `artifact_too_large`. */
  readonly maxBytes: number;
  /** Whether large objects are uploaded in parts (so memory stays bounded by the part size). */
  readonly multipart: boolean;
  /**
   * Whether several store instances, in this process or others, may write and delete the same
   * objects concurrently and converge (the same content put twice at once is one object).
   */
  readonly concurrentWriters: boolean;
  /** Whether processes on other machines can reach the same objects (S3: yes; a local directory: no). */
  readonly distributed: boolean;
}

/**
 * An artifact store (contract v1): content-addressed blobs scoped by tenant, for whatever is too
 * large for a database row — big tool results, chunk content, checkpoint payloads.
 *
 * Guarantees every implementation gives (and `@openrath/testing/artifacts` checks):
 * - **Content addressing.** An object's name is the SHA-256 of its bytes, within its tenant. The
 *   same content put twice is one object (puts are idempotent); the same content in two tenants is
 *   two objects, and no method of one tenant observes another's.
 * - **Streams, never whole buffers.** `put` reads its body chunk by chunk and `get` returns a
 *   stream, so memory stays bounded by a chunk (or a multipart part), not by the object.
 * - **Atomic visibility.** An object is visible (to `get`, `stat`, `list`) only once all of its bytes
 *   are durably stored. A put that fails, is aborted, or whose process dies mid-write leaves nothing
 *   visible; only invisible leftovers, which {@link ArtifactStoreV1.sweepIncomplete} removes.
 * - **Verified reads.** Every byte `get` hands out is hashed, and a stream whose bytes do not hash
 *   to its digest ends with an `artifact_corrupt` error instead of ending normally (see
 *   {@link ArtifactStoreV1.get} for exactly when).
 */
export interface ArtifactStoreV1 {
  /** The contract version this store implements. */
  readonly specVersion: "v1";
  /** What this store can do; see {@link ArtifactCapabilities}. */
  readonly capabilities: ArtifactCapabilities;

  /**
   * Stores `body` under `tenant`, named by its SHA-256. Resolves once the object is durably stored
   * and visible; content that is already stored resolves with the same info (and its `modifiedAt`
   * moves forward).
   *
   * @throws {ArtifactError} `invalid_tenant`, `invalid_digest`, `invalid_argument`;
   *   `artifact_digest_mismatch` when `options.digest` or `options.size` do not match the content;
   *   `artifact_too_large`; `artifact_source_failed` when the body fails while it is read;
   *   `artifact_aborted`; `artifact_unavailable` (retryable), `artifact_denied`,
   *   `artifact_backend_error`; `artifact_closed`. After any of them nothing new is visible.
   */
  put(tenant: string, body: ArtifactBody, options?: ArtifactPutOptions): Promise<ArtifactInfo>;

  /**
   * Opens the object for reading. The promise rejects before any byte when the object is missing
   * (`artifact_not_found`, naming the digest), so "not there" never looks like an empty stream.
   *
   * The stream verifies while it flows: it hashes every chunk and holds back the last one until
   * the digest checks. When the bytes do not match, the stream is destroyed with `artifact_corrupt`
   * (details: `tenant`, `digest`, `actualDigest`) and never emits `end`, so `for await`,
   * `stream/promises` `pipeline` and {@link readArtifact} reject. Callers that act on chunks as
   * they arrive (write them to a file, forward them) must treat them as tentative until the stream
   * ends, and undo on error; an object that fits in one chunk is never handed out at all. A
   * transfer that breaks mid-stream ends with `artifact_unavailable` (retryable).
   *
   * @throws {ArtifactError} `invalid_tenant`, `invalid_digest`, `artifact_not_found`,
   *   `artifact_unavailable`, `artifact_denied`, `artifact_backend_error`, `artifact_closed`;
   *   and, through the stream, `artifact_corrupt`, `artifact_unavailable`, `artifact_aborted`.
   */
  get(tenant: string, digest: string, options?: ArtifactGetOptions): Promise<Readable>;

  /**
   * The object's size and age, or `undefined` when it is not stored. Does not read or verify the
   * content.
   *
   * @throws {ArtifactError} `invalid_tenant`, `invalid_digest`, `artifact_unavailable`,
   *   `artifact_denied`, `artifact_backend_error`, `artifact_closed`.
   */
  stat(tenant: string, digest: string): Promise<ArtifactStat | undefined>;

  /**
   * Removes the object. Resolves `true` when it was there, `false` when it was not. Content
   * addressing means every reference to this digest in this tenant loses it: deleting is the
   * garbage collector's job, after it has checked that nothing refers to the object.
   *
   * @throws {ArtifactError} `invalid_tenant`, `invalid_digest`, `artifact_unavailable`,
   *   `artifact_denied`, `artifact_backend_error`, `artifact_closed`.
   */
  delete(tenant: string, digest: string): Promise<boolean>;

  /**
   * Every visible object, fetched page by page: each tenant's objects together and in digest
   * order (the order of the tenants is the store's own). Objects put or deleted while the listing
   * runs may or may not appear.
   *
   * @throws {ArtifactError} `invalid_tenant`, `artifact_unavailable`, `artifact_denied`,
   *   `artifact_backend_error`, `artifact_closed` (from the iterator).
   */
  list(options?: ArtifactListOptions): AsyncIterable<ArtifactStat>;

  /**
   * Removes what interrupted puts left behind (staging files, staged objects, unfinished multipart
   * uploads) that are older than `olderThanMs`. Never touches a visible object. Resolves with the
   * number of leftovers removed.
   *
   * @throws {ArtifactError} `artifact_unavailable`, `artifact_denied`, `artifact_backend_error`,
   *   `artifact_closed`.
   */
  sweepIncomplete(options?: ArtifactSweepOptions): Promise<number>;

  /** Releases the store's resources. Idempotent; other methods then reject with `artifact_closed`. */
  close(): Promise<void>;
}
