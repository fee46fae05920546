import { DIGEST_PATTERN, TENANT_PATTERN } from "@openrath/runtime-durable/store";

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

/** The `/`-separated segments of a key prefix, leading and trailing `/` dropped. */
function segmentsOf(prefix: string): string[] {
  const trimmed = prefix.replace(/^\/+|\/+$/g, "");
  return trimmed === "" ? [] : trimmed.split("/");
}

/**
 * Whether `prefix` is a key prefix: `""` for the bucket root, else `/`-separated segments of
 * `A-Z a-z 0-9 _ . -` (no empty, `.` or `..` segment; leading and trailing `/` are dropped).
 */
export function isKeyPrefix(prefix: string): boolean {
  return segmentsOf(prefix).every(
    (segment) => PREFIX_SEGMENT.test(segment) && segment !== "." && segment !== "..",
  );
}

/** The key layout for a prefix {@link isKeyPrefix} accepts (the options' schema checks it). */
export function keyLayout(prefix: string): KeyLayout {
  const segments = segmentsOf(prefix);
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
