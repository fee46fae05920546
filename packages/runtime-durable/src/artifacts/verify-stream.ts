import { createHash } from "node:crypto";
import { Readable } from "node:stream";
import { ArtifactError } from "../contract/artifact-error.js";
import { aborted } from "./artifact-source.js";

/** Options of {@link verifyArtifactStream}. */
export interface VerifyArtifactStreamOptions {
  /** The object's tenant, named in errors. */
  readonly tenant: string;
  /** The digest the bytes must hash to. */
  readonly digest: string;
  /**
   * The length the backend announced (a file's size, a `Content-Length`). A stream that ends short
   * of it is a broken transfer (`artifact_unavailable` when `shortIsTransient`, else
   * `artifact_corrupt`); one that runs past it is corrupt.
   */
  readonly size?: number;
  /** Whether ending short of `size` is a transfer failure worth retrying (a network read) rather than damage. */
  readonly shortIsTransient?: boolean;
  /** Maps a failure of the underlying stream to a coded error (default: `artifact_unavailable`). */
  readonly mapError?: (error: unknown) => ArtifactError;
  /** Destroys the stream with `artifact_aborted` when it fires. */
  readonly signal?: AbortSignal;
}

/**
 * Wraps a backend's byte stream so that it hashes every chunk and holds back the last one until
 * the SHA-256 of everything read equals `digest`. On a mismatch the returned stream is destroyed
 * with `artifact_corrupt` (details `tenant`, `digest`, `actualDigest`, `size`) and never emits
 * `end`; an object that arrives in one chunk is not handed out at all. Destroying the returned
 * stream destroys `source`.
 *
 * This is what every {@link ArtifactStoreV1.get} returns, so the verification is written once.
 */
export function verifyArtifactStream(
  source: AsyncIterable<Uint8Array | string>,
  options: VerifyArtifactStreamOptions,
): Readable {
  const { tenant, digest, size: announced, signal } = options;
  const mapError =
    options.mapError ??
    ((error: unknown) =>
      new ArtifactError(
        "artifact_unavailable",
        `Reading artifact ${digest} failed: ${(error as Error)?.message ?? String(error)}`,
        { cause: error, details: { tenant, digest } },
      ));

  async function* verified(): AsyncGenerator<Uint8Array> {
    const hash = createHash("sha256");
    let read = 0;
    let held: Uint8Array | undefined;
    const iterator = source[Symbol.asyncIterator]();
    let complete = false;
    try {
      for (;;) {
        if (signal?.aborted) throw aborted(tenant, signal, digest);
        let next: IteratorResult<Uint8Array | string>;
        try {
          next = await iterator.next();
        } catch (error) {
          if (signal?.aborted) throw aborted(tenant, signal, digest);
          throw ArtifactError.isInstance(error) ? error : mapError(error);
        }
        if (next.done) break;
        const chunk = typeof next.value === "string" ? Buffer.from(next.value) : next.value;
        if (chunk.byteLength === 0) continue;
        read += chunk.byteLength;
        if (announced !== undefined && read > announced) {
          throw corrupt(tenant, digest, undefined, read, `runs past its stored length of ${announced} bytes`);
        }
        hash.update(chunk);
        if (held !== undefined) yield held;
        held = chunk;
      }
      complete = true;
      if (announced !== undefined && read < announced) {
        const message = `Reading artifact ${digest} ended after ${read} of ${announced} bytes.`;
        if (options.shortIsTransient) {
          throw new ArtifactError("artifact_unavailable", `${message} Retry the read.`, {
            details: { tenant, digest, size: announced, bytesRead: read },
          });
        }
        throw corrupt(tenant, digest, hash.digest("hex"), read, `is ${read} bytes, not ${announced}`);
      }
      const actual = hash.digest("hex");
      if (actual !== digest) throw corrupt(tenant, digest, actual, read, `hashes to ${actual}`);
      if (held !== undefined) yield held;
    } finally {
      if (!complete) await iterator.return?.();
    }
  }

  const stream = Readable.from(verified(), { objectMode: false, highWaterMark: 1 << 16 });
  if (signal !== undefined) {
    const onAbort = () => stream.destroy(aborted(tenant, signal, digest));
    if (signal.aborted) onAbort();
    else {
      signal.addEventListener("abort", onAbort, { once: true });
      stream.once("close", () => signal.removeEventListener("abort", onAbort));
    }
  }
  return stream;
}

function corrupt(
  tenant: string,
  digest: string,
  actualDigest: string | undefined,
  size: number,
  what: string,
): ArtifactError {
  return new ArtifactError(
    "artifact_corrupt",
    `Artifact ${digest} of tenant ${tenant} is corrupt: the stored content ${what}. It was not returned; restore the object from a backup or put its content again.`,
    { details: { tenant, digest, ...(actualDigest === undefined ? {} : { actualDigest }), size } },
  );
}
