import type { Readable } from "node:stream";
import {
  AbortMultipartUploadCommand,
  DeleteObjectCommand,
  GetObjectCommand,
  type GetObjectCommandOutput,
  ListMultipartUploadsCommand,
  type ListMultipartUploadsCommandOutput,
  ListObjectsV2Command,
  S3Client,
  type S3ClientConfig,
} from "@aws-sdk/client-s3";
import { checkOptions } from "@openrath/core/backend";
import {
  type ArtifactCapabilities,
  ArtifactError,
  type ArtifactStat,
  type ArtifactStoreV1,
  artifactUri,
  checkDigest,
  checkTenant,
  DEFAULT_SWEEP_AGE_MS,
  verifyArtifactStream,
} from "@openrath/runtime-durable/store";
import { keyLayout } from "./internal/keys.js";
import { isNotFound, mapS3Error, nameOf, statusOf } from "./internal/s3-errors.js";
import { headObject, type PutContext, putObject } from "./internal/s3-put.js";
import { S3ArtifactStoreOptionsSchema } from "./internal/schemas.js";

export { MAX_S3_OBJECT_BYTES, MIN_PART_SIZE_BYTES } from "./internal/schemas.js";

/** Explicit S3 credentials. */
export interface S3ArtifactCredentials {
  readonly accessKeyId: string;
  readonly secretAccessKey: string;
  readonly sessionToken?: string;
}

/** Options of {@link s3ArtifactStore}. */
export interface S3ArtifactStoreOptions {
  /** The bucket that holds the objects. It must exist; the store never creates or deletes buckets. */
  readonly bucket: string;
  /**
   * Key prefix inside the bucket (default `"openrath"`): objects live at
   * `<prefix>/<tenant>/<first two hex digits>/<digest>`, staged puts under `<prefix>/.staging/`.
   * `""` puts them at the bucket root.
   */
  readonly prefix?: string;
  /**
   * A ready S3 client to use instead of building one. `endpoint`, `region`, `forcePathStyle`,
   * `credentials` and `clientConfig` are then ignored, and `close()` leaves the client open.
   */
  readonly client?: S3Client;
  /**
   * A custom endpoint for an S3-compatible server (`http://127.0.0.1:9000`, a MinIO or Ceph
   * gateway). Default: AWS's endpoint for the region.
   */
  readonly endpoint?: string;
  /**
   * The region (default: `AWS_REGION`, then `AWS_DEFAULT_REGION`, then `us-east-1`). It picks AWS's
   * endpoint and is part of every request signature, also for custom endpoints.
   */
  readonly region?: string;
  /**
   * Path-style addressing (`https://host/<bucket>/<key>`) instead of virtual-host addressing
   * (`https://<bucket>.host/<key>`, the default). Most self-hosted servers (MinIO, s3rver) need
   * `true`; AWS needs `false` for new buckets.
   */
  readonly forcePathStyle?: boolean;
  /**
   * Credentials. Default: the AWS SDK's provider chain — `AWS_ACCESS_KEY_ID`,
   * `AWS_SECRET_ACCESS_KEY` and `AWS_SESSION_TOKEN` from the environment first, then shared config
   * files, SSO, and container or instance roles.
   */
  readonly credentials?: S3ArtifactCredentials | S3ClientConfig["credentials"];
  /** Further S3 client settings (`requestHandler`, `maxAttempts`, `retryMode`, `logger`…). */
  readonly clientConfig?: Omit<S3ClientConfig, "endpoint" | "region" | "forcePathStyle" | "credentials">;
  /**
   * Content up to this many bytes goes up in one `PutObject` request, read into memory first;
   * larger content is uploaded in parts (default 8 MiB).
   */
  readonly multipartThresholdBytes?: number;
  /** Size of each part of a multipart upload, at least 5 MiB (default 8 MiB). */
  readonly partSizeBytes?: number;
  /**
   * Parts uploaded in parallel (default 4). Memory of one large put is bounded by about
   * `(queueSize + 1) × partSizeBytes`.
   */
  readonly queueSize?: number;
  /** The largest object in bytes, at most 5 GiB (default 5 GiB). */
  readonly maxBytes?: number;
  /** Keys per listing request (default 1000, S3's maximum). */
  readonly listPageSize?: number;
}

/**
 * An artifact store on Amazon S3 or an S3-compatible server (MinIO, Ceph, R2, s3rver), through
 * `@aws-sdk/client-s3` and `@aws-sdk/lib-storage`: content-addressed by SHA-256 and scoped by
 * tenant, streamed in and out, uploaded in parts above a threshold, checked by the server on
 * upload (`x-amz-checksum-sha256`) and by the store on every read.
 *
 * @example
 * ```ts
 * import { s3ArtifactStore } from "@openrath/artifacts-s3";
 * import { readArtifactText } from "@openrath/runtime-durable";
 *
 * const artifacts = s3ArtifactStore({
 *   bucket: "openrath-artifacts",
 *   endpoint: "http://127.0.0.1:9000", // omit for AWS
 *   forcePathStyle: true,
 * });
 * const { digest } = await artifacts.put("acme", "a large tool result…");
 * console.log(await readArtifactText(artifacts, "acme", digest));
 * ```
 */
export function s3ArtifactStore(options: S3ArtifactStoreOptions): ArtifactStoreV1 {
  const settings = checkOptions(S3ArtifactStoreOptionsSchema, options, {
    backend: "s3ArtifactStore",
    secrets: ["clientConfig"],
  });
  const { bucket, partSizeBytes, multipartThresholdBytes, queueSize, maxBytes, listPageSize } = settings;
  const keys = keyLayout(settings.prefix);
  const ownsClient = settings.client === undefined;
  const client =
    settings.client ??
    new S3Client({
      // Checksums are ours to choose: SHA-256 on every upload, set explicitly, and our own SHA-256
      // check on every read (the SDK's default CRC32 trailers are not understood by every
      // S3-compatible server).
      requestChecksumCalculation: "WHEN_REQUIRED",
      responseChecksumValidation: "WHEN_REQUIRED",
      ...settings.clientConfig,
      region: settings.region ?? process.env.AWS_REGION ?? process.env.AWS_DEFAULT_REGION ?? "us-east-1",
      ...(settings.endpoint === undefined ? {} : { endpoint: settings.endpoint }),
      forcePathStyle: settings.forcePathStyle ?? false,
      ...(settings.credentials === undefined ? {} : { credentials: settings.credentials }),
    });
  const context: PutContext = {
    client,
    bucket,
    keys,
    maxBytes,
    multipartThresholdBytes,
    partSizeBytes,
    queueSize,
  };
  let closed = false;

  const capabilities: ArtifactCapabilities = Object.freeze({
    maxBytes,
    multipart: true,
    concurrentWriters: true,
    distributed: true,
  });

  const guard = () => {
    if (closed)
      throw new ArtifactError("artifact_closed", `The S3 artifact store for bucket ${bucket} is closed.`);
  };

  async function stat(tenant: string, digest: string): Promise<ArtifactStat | undefined> {
    guard();
    checkTenant(tenant);
    checkDigest(digest);
    const head = await headObject(context, tenant, digest);
    return head === undefined ? undefined : { ...statOf(tenant, digest, head.size, head.modifiedAt) };
  }

  async function get(
    tenant: string,
    digest: string,
    getOptions: { signal?: AbortSignal } = {},
  ): Promise<Readable> {
    guard();
    checkTenant(tenant);
    checkDigest(digest);
    const key = keys.object(tenant, digest);
    let response: GetObjectCommandOutput;
    try {
      response = await client.send(new GetObjectCommand({ Bucket: bucket, Key: key }), {
        abortSignal: getOptions.signal,
      });
    } catch (error) {
      if (isNotFound(error)) {
        throw new ArtifactError(
          "artifact_not_found",
          `Artifact ${digest} of tenant ${tenant} does not exist in bucket ${bucket} (never stored, deleted, or removed behind the store's back).`,
          { details: { tenant, digest, bucket, key } },
        );
      }
      throw mapS3Error(error, { action: "get", bucket, key, tenant, digest });
    }
    const body = response.Body as (Readable & AsyncIterable<Uint8Array>) | undefined;
    return verifyArtifactStream(body ?? emptyBody(), {
      tenant,
      digest,
      size: response.ContentLength,
      shortIsTransient: true,
      signal: getOptions.signal,
      mapError: (error) => mapS3Error(error, { action: "read", bucket, key, tenant, digest }),
    });
  }

  async function* listKeys(prefix: string) {
    let token: string | undefined;
    do {
      let page: Awaited<ReturnType<typeof listPage>>;
      try {
        page = await listPage(prefix, token);
      } catch (error) {
        throw mapS3Error(error, { action: "list", bucket, tenant: "-" });
      }
      yield page;
      token = page.IsTruncated ? page.NextContinuationToken : undefined;
    } while (token !== undefined);
  }

  function listPage(prefix: string, token: string | undefined) {
    return client.send(
      new ListObjectsV2Command({
        Bucket: bucket,
        Prefix: prefix,
        ContinuationToken: token,
        MaxKeys: listPageSize,
      }),
    );
  }

  async function* list(listOptions: { tenant?: string } = {}): AsyncGenerator<ArtifactStat> {
    guard();
    const tenant = listOptions.tenant === undefined ? undefined : checkTenant(listOptions.tenant);
    // Keys sort by tenant then shard then digest, so one listing yields each tenant's objects
    // together, in digest order.
    for await (const page of listKeys(tenant === undefined ? keys.base : keys.tenant(tenant))) {
      for (const object of page.Contents ?? []) {
        const parsed = object.Key === undefined ? undefined : keys.parse(object.Key);
        if (parsed === undefined || (tenant !== undefined && parsed.tenant !== tenant)) continue;
        guard();
        yield statOf(parsed.tenant, parsed.digest, object.Size ?? 0, object.LastModified?.getTime() ?? 0);
      }
    }
  }

  async function sweepIncomplete(sweepOptions: { olderThanMs?: number } = {}): Promise<number> {
    guard();
    const cutoff = Date.now() - (sweepOptions.olderThanMs ?? DEFAULT_SWEEP_AGE_MS);
    let removed = 0;
    for await (const page of listKeys(keys.staging)) {
      for (const object of page.Contents ?? []) {
        if (object.Key === undefined || (object.LastModified?.getTime() ?? 0) >= cutoff) continue;
        try {
          await client.send(new DeleteObjectCommand({ Bucket: bucket, Key: object.Key }));
          removed += 1;
        } catch (error) {
          if (!isNotFound(error))
            throw mapS3Error(error, { action: "sweep", bucket, key: object.Key, tenant: "-" });
        }
      }
    }
    removed += await abortStaleUploads(cutoff);
    return removed;
  }

  /** Aborts unfinished multipart uploads under the prefix started before `cutoff`. */
  async function abortStaleUploads(cutoff: number): Promise<number> {
    let removed = 0;
    let keyMarker: string | undefined;
    let uploadIdMarker: string | undefined;
    for (;;) {
      let page: ListMultipartUploadsCommandOutput;
      try {
        page = await client.send(
          new ListMultipartUploadsCommand({
            Bucket: bucket,
            Prefix: keys.base,
            KeyMarker: keyMarker,
            UploadIdMarker: uploadIdMarker,
          }),
        );
      } catch (error) {
        // Some S3-compatible servers (s3rver among them) do not list uploads; a bucket lifecycle
        // rule (AbortIncompleteMultipartUpload) is the clean-up there.
        if (statusOf(error) === 501 || nameOf(error) === "NotImplemented") return removed;
        throw mapS3Error(error, { action: "sweep", bucket, tenant: "-" });
      }
      for (const upload of page.Uploads ?? []) {
        if (upload.Key === undefined || upload.UploadId === undefined) continue;
        if ((upload.Initiated?.getTime() ?? 0) >= cutoff) continue;
        try {
          await client.send(
            new AbortMultipartUploadCommand({ Bucket: bucket, Key: upload.Key, UploadId: upload.UploadId }),
          );
          removed += 1;
        } catch (error) {
          if (!isNotFound(error))
            throw mapS3Error(error, { action: "sweep", bucket, key: upload.Key, tenant: "-" });
        }
      }
      if (!page.IsTruncated) return removed;
      keyMarker = page.NextKeyMarker;
      uploadIdMarker = page.NextUploadIdMarker;
    }
  }

  return {
    specVersion: "v1",
    capabilities,
    async put(tenant, body, putOptions = {}) {
      guard();
      checkTenant(tenant);
      return putObject(context, tenant, body, putOptions);
    },
    get,
    stat,
    async delete(tenant, digest) {
      guard();
      checkTenant(tenant);
      checkDigest(digest);
      // DeleteObject succeeds for absent keys, so ask first to report whether it was there.
      if ((await headObject(context, tenant, digest)) === undefined) return false;
      const key = keys.object(tenant, digest);
      try {
        await client.send(new DeleteObjectCommand({ Bucket: bucket, Key: key }));
        return true;
      } catch (error) {
        if (isNotFound(error)) return false;
        throw mapS3Error(error, { action: "delete", bucket, key, tenant, digest });
      }
    },
    list,
    sweepIncomplete,
    async close() {
      if (closed) return;
      closed = true;
      if (ownsClient) client.destroy();
    },
  };
}

function statOf(tenant: string, digest: string, size: number, modifiedAt: number): ArtifactStat {
  return { tenant, digest, size, uri: artifactUri(tenant, digest), modifiedAt };
}

async function* emptyBody(): AsyncGenerator<Uint8Array> {}
