import { ArtifactError } from "@openrath/runtime-durable/store";

/** Node and SDK error codes of a connection that failed or broke: worth retrying. */
const NETWORK_CODES = new Set([
  "ECONNREFUSED",
  "ECONNRESET",
  "ECONNABORTED",
  "EPIPE",
  "ETIMEDOUT",
  "EHOSTUNREACH",
  "ENETUNREACH",
  "ENOTFOUND",
  "EAI_AGAIN",
  "ERR_STREAM_PREMATURE_CLOSE",
  "UND_ERR_SOCKET",
]);

/** S3 error codes that name a transient condition. */
const TRANSIENT_NAMES = new Set([
  "SlowDown",
  "Throttling",
  "ThrottlingException",
  "RequestTimeout",
  "RequestTimeoutException",
  "InternalError",
  "ServiceUnavailable",
  "TimeoutError",
  "OperationAborted",
]);

/** S3 error codes that mean the credentials or the permission were refused. */
const DENIED_NAMES = new Set([
  "AccessDenied",
  "InvalidAccessKeyId",
  "SignatureDoesNotMatch",
  "ExpiredToken",
  "InvalidToken",
  "TokenRefreshRequired",
  "CredentialsProviderError",
]);

/** S3 error codes of bytes that arrived damaged at the server. */
const DIGEST_NAMES = new Set(["BadDigest", "XAmzContentChecksumMismatch", "InvalidDigest"]);

interface SdkErrorShape {
  readonly name?: string;
  readonly code?: string;
  readonly Code?: string;
  readonly message?: string;
  readonly $retryable?: unknown;
  readonly $metadata?: { readonly httpStatusCode?: number };
  readonly cause?: unknown;
}

/** The HTTP status an SDK error carries, if any. */
export function statusOf(error: unknown): number | undefined {
  return (error as SdkErrorShape | undefined)?.$metadata?.httpStatusCode;
}

/** The S3 error code (`NoSuchKey`, `SlowDown`…) or Node error code an error carries. */
export function nameOf(error: unknown): string | undefined {
  const e = error as SdkErrorShape | undefined;
  return e?.Code ?? (e?.name && e.name !== "Error" ? e.name : undefined) ?? e?.code;
}

/** Whether `error` says the key (not the bucket) does not exist. */
export function isNotFound(error: unknown): boolean {
  const name = nameOf(error);
  if (name === "NoSuchBucket") return false;
  return name === "NoSuchKey" || name === "NotFound" || statusOf(error) === 404;
}

function isNetwork(error: unknown): boolean {
  for (let e: unknown = error, depth = 0; e && depth < 4; e = (e as SdkErrorShape).cause, depth++) {
    const code = (e as SdkErrorShape).code;
    if (code !== undefined && NETWORK_CODES.has(code)) return true;
    if (
      /socket hang up|other side closed|premature close|aborted/i.test((e as SdkErrorShape).message ?? "")
    ) {
      return true;
    }
  }
  return false;
}

/**
 * Maps an error of the S3 client (a service error, a network failure, an abort) to a coded
 * {@link ArtifactError} that names the bucket, the key and, when there is one, the digest.
 */
export function mapS3Error(
  error: unknown,
  context: {
    readonly action: string;
    readonly bucket: string;
    readonly key?: string;
    readonly tenant: string;
    readonly digest?: string;
  },
): ArtifactError {
  if (ArtifactError.isInstance(error)) return error as ArtifactError;
  const status = statusOf(error);
  const name = nameOf(error);
  const message = (error as SdkErrorShape | undefined)?.message ?? String(error);
  const details = {
    tenant: context.tenant,
    ...(context.digest === undefined ? {} : { digest: context.digest }),
    bucket: context.bucket,
    ...(context.key === undefined ? {} : { key: context.key }),
    ...(status === undefined ? {} : { status }),
    ...(name === undefined ? {} : { s3Code: name }),
  };
  const what = context.digest === undefined ? "an artifact" : `artifact ${context.digest}`;
  const where = `in bucket ${context.bucket}`;
  if (name === "AbortError") {
    return new ArtifactError("artifact_aborted", `The artifact ${context.action} was aborted.`, {
      cause: error,
      details,
    });
  }
  if (name === "NoSuchBucket") {
    return new ArtifactError(
      "artifact_backend_error",
      `Cannot ${context.action} ${what}: bucket ${context.bucket} does not exist. Create it, or fix the bucket option.`,
      { cause: error, details },
    );
  }
  if (DIGEST_NAMES.has(name ?? "")) {
    return new ArtifactError(
      "artifact_digest_mismatch",
      `The server received damaged bytes while trying to ${context.action} ${what} ${where} (${name}); nothing was stored. Retry the put.`,
      { cause: error, details, retryable: true },
    );
  }
  if (status === 401 || status === 403 || DENIED_NAMES.has(name ?? "")) {
    return new ArtifactError(
      "artifact_denied",
      `The S3 server refused to ${context.action} ${what} ${where}: ${name ?? status} (${message}). Check the credentials and the bucket policy.`,
      { cause: error, details },
    );
  }
  if (
    (status !== undefined && (status >= 500 || status === 429 || status === 408)) ||
    TRANSIENT_NAMES.has(name ?? "") ||
    isNetwork(error)
  ) {
    return new ArtifactError(
      "artifact_unavailable",
      `The S3 server is unavailable: cannot ${context.action} ${what} ${where} (${name ?? status ?? "no answer"}: ${message}). Retry later.`,
      { cause: error, details },
    );
  }
  return new ArtifactError(
    "artifact_backend_error",
    `The S3 server rejected the request to ${context.action} ${what} ${where}: ${name ?? status ?? "error"} (${message}).`,
    { cause: error, details },
  );
}
