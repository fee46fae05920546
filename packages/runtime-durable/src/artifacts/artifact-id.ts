import { ArtifactError } from "../contract/artifact-error.js";

/** What a tenant id looks like: 1–128 of `A-Z a-z 0-9 _ . -`, starting with a letter or digit. */
export const TENANT_PATTERN = /^[A-Za-z0-9][A-Za-z0-9_.-]{0,127}$/;

/** What a digest looks like: lower-case hexadecimal SHA-256. */
export const DIGEST_PATTERN = /^[0-9a-f]{64}$/;

/** The SHA-256 digest of zero bytes. */
export const EMPTY_DIGEST = "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855";

/**
 * Returns `tenant` when it is a valid tenant id (see {@link TENANT_PATTERN}). Tenant ids become
 * path segments and key prefixes, so anything else (`..`, `a/b`, an empty string) is refused.
 *
 * @throws {ArtifactError} `invalid_tenant`
 */
export function checkTenant(tenant: unknown): string {
  if (typeof tenant === "string" && TENANT_PATTERN.test(tenant)) return tenant;
  throw new ArtifactError(
    "invalid_tenant",
    `Invalid artifact tenant ${JSON.stringify(tenant) ?? String(tenant)}: a tenant id is 1–128 characters of A-Z, a-z, 0-9, "_", "." and "-", starting with a letter or digit.`,
    { details: { tenant } },
  );
}

/**
 * Returns `digest` when it is a lower-case hexadecimal SHA-256 digest.
 *
 * @throws {ArtifactError} `invalid_digest`
 */
export function checkDigest(digest: unknown): string {
  if (typeof digest === "string" && DIGEST_PATTERN.test(digest)) return digest;
  throw new ArtifactError(
    "invalid_digest",
    `Invalid artifact digest ${JSON.stringify(digest) ?? String(digest)}: expected 64 lower-case hexadecimal characters (SHA-256).`,
    { details: { digest } },
  );
}

/** The URI that names an artifact: `artifact://<tenant>/<digest>`. */
export function artifactUri(tenant: string, digest: string): string {
  return `artifact://${checkTenant(tenant)}/${checkDigest(digest)}`;
}

/**
 * The tenant and digest an `artifact://<tenant>/<digest>` URI names.
 *
 * @throws {ArtifactError} `invalid_argument` for anything else; `invalid_tenant`, `invalid_digest`.
 */
export function parseArtifactUri(uri: string): { readonly tenant: string; readonly digest: string } {
  const match = typeof uri === "string" ? /^artifact:\/\/([^/]+)\/([^/]+)$/.exec(uri) : null;
  if (match === null) {
    throw new ArtifactError(
      "invalid_argument",
      `Not an artifact URI: ${JSON.stringify(uri)}; expected artifact://<tenant>/<sha-256 digest>.`,
      { details: { uri } },
    );
  }
  return { tenant: checkTenant(match[1]), digest: checkDigest(match[2]) };
}
