import { ArtifactError, DIGEST_PATTERN, TENANT_PATTERN } from "@openrath/runtime-durable/store";

/** Characters a key prefix may use, per `/`-separated segment. */
const PREFIX_SEGMENT = /^[A-Za-z0-9_.-]+$/;

/**
 * Where objects live in the bucket: `<prefix>/<tenant>/<first two hex digits>/<digest>`, puts in
 * progress under `<prefix>/.staging/<tenant>/<uuid>` (a tenant id never starts with a dot, so the
 * staging area can never collide with a tenant).
 */
export interface KeyLayout {
  /** The prefix followed by `/`, or `""` for the bucket root. */
  readonly base: string;
  /** The key of an object. */
  object(tenant: string, digest: string): string;
  /** The key prefix of a tenant's objects. */
  tenant(tenant: string): string;
  /** The key prefix of the staging area. */
  readonly staging: string;
  /** The key of a new staged object. */
  stage(tenant: string, id: string): string;
  /** The tenant and digest an object key names, or `undefined` for any other key. */
  parse(key: string): { readonly tenant: string; readonly digest: string } | undefined;
}

/**
 * The key layout for `prefix`: `""` for the bucket root, else `/`-separated segments of
 * `A-Z a-z 0-9 _ . -` (no empty, `.` or `..` segment; leading and trailing `/` are dropped).
 *
 * @throws {ArtifactError} `invalid_argument` for any other prefix.
 */
export function keyLayout(prefix: string): KeyLayout {
  if (typeof prefix !== "string") {
    throw new ArtifactError("invalid_argument", `The key prefix must be a string, got ${typeof prefix}.`);
  }
  const trimmed = prefix.replace(/^\/+|\/+$/g, "");
  const segments = trimmed === "" ? [] : trimmed.split("/");
  for (const segment of segments) {
    if (!PREFIX_SEGMENT.test(segment) || segment === "." || segment === "..") {
      throw new ArtifactError(
        "invalid_argument",
        `Invalid key prefix ${JSON.stringify(prefix)}: each "/"-separated segment must be non-empty, use only A-Z, a-z, 0-9, "_", "." and "-", and not be "." or "..".`,
        { details: { prefix } },
      );
    }
  }
  const base = segments.length === 0 ? "" : `${segments.join("/")}/`;
  return {
    base,
    object: (tenant, digest) => `${base}${tenant}/${digest.slice(0, 2)}/${digest}`,
    tenant: (tenant) => `${base}${tenant}/`,
    staging: `${base}.staging/`,
    stage: (tenant, id) => `${base}.staging/${tenant}/${id}`,
    parse(key) {
      if (!key.startsWith(base)) return undefined;
      const [tenant, shard, digest, extra] = key.slice(base.length).split("/");
      if (extra !== undefined || tenant === undefined || shard === undefined || digest === undefined)
        return undefined;
      if (
        !TENANT_PATTERN.test(tenant) ||
        !DIGEST_PATTERN.test(digest) ||
        !digest.startsWith(shard) ||
        shard.length !== 2
      ) {
        return undefined;
      }
      return { tenant, digest };
    },
  };
}
