import { randomUUID } from "node:crypto";
import { Readable } from "node:stream";
import {
  CopyObjectCommand,
  type CopyObjectCommandInput,
  DeleteObjectCommand,
  HeadObjectCommand,
  PutObjectCommand,
  type S3Client,
} from "@aws-sdk/client-s3";
import { Upload } from "@aws-sdk/lib-storage";
import {
  type ArtifactBody,
  ArtifactError,
  type ArtifactInfo,
  type ArtifactPutOptions,
  artifactUri,
  checkDigest,
  createArtifactSource,
  digestOf,
} from "@openrath/runtime-durable/store";
import type { KeyLayout } from "./keys.js";
import { isNotFound, mapS3Error } from "./s3-errors.js";

/** What a put needs from the store. */
export interface PutContext {
  readonly client: S3Client;
  readonly bucket: string;
  readonly keys: KeyLayout;
  readonly maxBytes: number;
  readonly multipartThresholdBytes: number;
  readonly partSizeBytes: number;
  readonly queueSize: number;
}

const CONTENT_TYPE = "application/octet-stream";

/**
 * Stores one object.
 *
 * - Content up to the multipart threshold is read into memory (bounded by the threshold), hashed,
 *   and sent in one `PutObject` to its final key with `x-amz-checksum-sha256`, which S3 verifies.
 *   S3 makes an object visible only when its upload completes, so a broken request leaves nothing.
 * - With the digest declared and the size unknown or above the threshold, a HEAD first: content
 *   already stored is not sent again (a server-side copy onto itself refreshes its age instead).
 * - Larger content goes through `lib-storage`'s multipart `Upload`, parts carrying their own
 *   SHA-256 checksums. With the digest declared it uploads to the final key and the body is checked
 *   before the upload is completed (a mismatch aborts it). Without one, the final key is unknown
 *   until the last byte, so it uploads to a staging key, then copies server-side to the final key
 *   and deletes the staged object. An upload that dies is never completed, so it stays invisible.
 */
export async function putObject(
  context: PutContext,
  tenant: string,
  body: ArtifactBody,
  options: ArtifactPutOptions,
  known = false,
): Promise<ArtifactInfo> {
  const { client, bucket, keys } = context;
  const signal = options.signal;
  // Bytes and strings can be read twice: hash them first, so they go straight to their final key
  // (no staging copy) and content already stored is not sent again.
  if (options.digest === undefined && (typeof body === "string" || body instanceof Uint8Array)) {
    const { digest, size } = digestOf(body);
    // A different declared size, or one over the limit, fails in the general path below.
    return putObject(context, tenant, body, { ...options, digest, size: options.size ?? size }, true);
  }
  const declared = options.digest === undefined ? undefined : checkDigest(options.digest);
  // Asking first costs a round trip; it pays off only when it can save a multipart upload.
  const small = options.size !== undefined && options.size <= context.multipartThresholdBytes;
  if (declared !== undefined && !small) {
    const existing = await headSize(context, tenant, declared, signal);
    if (existing !== undefined) {
      if (options.size !== undefined && options.size !== existing) {
        throw new ArtifactError(
          "artifact_digest_mismatch",
          `Artifact ${declared} is stored with ${existing} bytes, but the put declares ${options.size}; content with that digest cannot have that size.`,
          { details: { tenant, digest: declared, size: options.size, actualSize: existing } },
        );
      }
      if (await touch(context, tenant, declared, signal)) return info(tenant, declared, existing);
    }
  }

  if (
    known &&
    body instanceof Uint8Array &&
    body.byteLength > context.multipartThresholdBytes &&
    body.byteLength <= context.maxBytes &&
    options.size === body.byteLength &&
    !signal?.aborted
  ) {
    // Hashed above: the buffer goes to lib-storage as it is, without a second pass.
    const key = keys.object(tenant, declared!);
    try {
      await uploadParts(context, key, body, signal);
    } catch (error) {
      throw uploadError(error, signal, { bucket, key, tenant, digest: declared });
    }
    return info(tenant, declared!, body.byteLength);
  }

  const source = createArtifactSource(body, { ...options, tenant, maxBytes: context.maxBytes });
  const iterator = source[Symbol.asyncIterator]();
  const head: Uint8Array[] = [];
  let headBytes = 0;
  let ended = false;
  try {
    while (headBytes <= context.multipartThresholdBytes) {
      const next = await iterator.next();
      if (next.done) {
        ended = true;
        break;
      }
      head.push(next.value);
      headBytes += next.value.byteLength;
    }
  } catch (error) {
    await iterator.return?.(undefined);
    throw error;
  }

  if (ended) {
    const digest = source.digest;
    const key = keys.object(tenant, digest);
    const bytes = head.length === 1 ? head[0]! : Buffer.concat(head, headBytes);
    try {
      await client.send(
        new PutObjectCommand({
          Bucket: bucket,
          Key: key,
          Body: bytes,
          ContentLength: bytes.byteLength,
          ContentType: CONTENT_TYPE,
          ChecksumSHA256: Buffer.from(digest, "hex").toString("base64"),
        }),
        { abortSignal: signal },
      );
    } catch (error) {
      throw mapS3Error(error, { action: "put", bucket, key, tenant, digest });
    }
    return info(tenant, digest, source.size);
  }

  const key = declared !== undefined ? keys.object(tenant, declared) : keys.stage(tenant, randomUUID());
  let sourceError: unknown;
  const rest = Readable.from(
    (async function* () {
      while (head.length > 0) yield head.shift()!;
      for (;;) {
        let next: IteratorResult<Uint8Array>;
        try {
          next = await iterator.next();
        } catch (error) {
          // Only the body's own failures; an error thrown in at a yield is the upload tearing the
          // stream down, and the upload's error says why.
          sourceError = error;
          throw error;
        }
        if (next.done) return;
        yield next.value;
      }
    })(),
    { objectMode: false },
  );
  try {
    await uploadParts(context, key, rest, signal);
  } catch (error) {
    rest.destroy();
    // Release the caller's body (not awaited: a body that never yields again must not hang us).
    iterator.return?.(undefined)?.catch(() => {});
    // The body's own failure (a digest mismatch, an abort, a broken source) is the real cause;
    // lib-storage may report the failure of its clean-up request instead.
    if (sourceError !== undefined) throw sourceError;
    throw uploadError(error, signal, { bucket, key, tenant, digest: declared });
  }
  if (sourceError !== undefined) throw sourceError;
  const digest = source.digest;
  if (declared === undefined) await promote(context, tenant, key, digest, signal);
  return info(tenant, digest, source.size);
}

/** A multipart upload through lib-storage (a single PUT when the body fits in one part), aborted with `signal`. */
async function uploadParts(
  context: PutContext,
  key: string,
  body: Readable | Uint8Array,
  signal: AbortSignal | undefined,
): Promise<void> {
  const controller = new AbortController();
  const onAbort = () => controller.abort(signal?.reason);
  signal?.addEventListener("abort", onAbort, { once: true });
  try {
    const upload = new Upload({
      client: context.client,
      params: {
        Bucket: context.bucket,
        Key: key,
        Body: body,
        ContentType: CONTENT_TYPE,
        ChecksumAlgorithm: "SHA256",
      },
      partSize: context.partSizeBytes,
      queueSize: context.queueSize,
      leavePartsOnError: false,
      abortController: controller,
    });
    await upload.done();
  } finally {
    signal?.removeEventListener("abort", onAbort);
  }
}

function uploadError(
  error: unknown,
  signal: AbortSignal | undefined,
  where: { bucket: string; key: string; tenant: string; digest: string | undefined },
): ArtifactError {
  if (signal?.aborted) {
    return new ArtifactError("artifact_aborted", "The artifact put was aborted.", {
      cause: signal.reason,
      details: { tenant: where.tenant, bucket: where.bucket, key: where.key },
    });
  }
  return mapS3Error(error, { action: "put", ...where });
}

/** Copies a staged object to its final key and removes the staged one. */
async function promote(
  context: PutContext,
  tenant: string,
  staged: string,
  digest: string,
  signal: AbortSignal | undefined,
): Promise<void> {
  const { client, bucket, keys } = context;
  const key = keys.object(tenant, digest);
  try {
    await copyObject(context, staged, key, { ChecksumAlgorithm: "SHA256" }, signal);
  } catch (error) {
    throw mapS3Error(error, { action: "put", bucket, key, tenant, digest });
  } finally {
    // A staged object left behind (this request failed, the process died) is invisible and
    // removed by sweepIncomplete.
    await client.send(new DeleteObjectCommand({ Bucket: bucket, Key: staged })).catch(() => {});
  }
}

/**
 * A server-side copy of the object at `from` onto `key` in the store's bucket, its metadata
 * replaced (our content type plus `extra`), which also restarts the object's age.
 */
async function copyObject(
  context: PutContext,
  from: string,
  key: string,
  extra: Pick<CopyObjectCommandInput, "ChecksumAlgorithm" | "Metadata">,
  signal: AbortSignal | undefined,
): Promise<void> {
  await context.client.send(
    new CopyObjectCommand({
      Bucket: context.bucket,
      Key: key,
      CopySource: `${context.bucket}/${from}`,
      ContentType: CONTENT_TYPE,
      MetadataDirective: "REPLACE",
      ...extra,
    }),
    { abortSignal: signal },
  );
}

/** The stored size of an object, or `undefined` when it does not exist. */
export async function headSize(
  context: Pick<PutContext, "client" | "bucket" | "keys">,
  tenant: string,
  digest: string,
  signal?: AbortSignal,
): Promise<number | undefined> {
  const head = await headObject(context, tenant, digest, signal);
  return head?.size;
}

/** HEAD of an object: its size and modification time, or `undefined` when it does not exist. */
export async function headObject(
  context: Pick<PutContext, "client" | "bucket" | "keys">,
  tenant: string,
  digest: string,
  signal?: AbortSignal,
): Promise<{ readonly size: number; readonly modifiedAt: number } | undefined> {
  const key = context.keys.object(tenant, digest);
  try {
    const head = await context.client.send(new HeadObjectCommand({ Bucket: context.bucket, Key: key }), {
      abortSignal: signal,
    });
    return { size: head.ContentLength ?? 0, modifiedAt: head.LastModified?.getTime() ?? Date.now() };
  } catch (error) {
    if (isNotFound(error)) return undefined;
    throw mapS3Error(error, { action: "stat", bucket: context.bucket, key, tenant, digest });
  }
}

/**
 * Moves an existing object's Last-Modified forward without sending its bytes: a copy onto itself
 * with replaced metadata, done by the server. Resolves `false` when the object vanished meanwhile.
 */
async function touch(
  context: PutContext,
  tenant: string,
  digest: string,
  signal?: AbortSignal,
): Promise<boolean> {
  const key = context.keys.object(tenant, digest);
  try {
    await copyObject(context, key, key, { Metadata: { "openrath-put-at": String(Date.now()) } }, signal);
    return true;
  } catch (error) {
    if (isNotFound(error)) return false;
    throw mapS3Error(error, { action: "refresh", bucket: context.bucket, key, tenant, digest });
  }
}

function info(tenant: string, digest: string, size: number): ArtifactInfo {
  return { tenant, digest, size, uri: artifactUri(tenant, digest) };
}
