import type { S3Client } from "@aws-sdk/client-s3";
import * as z from "zod";
import type { S3ArtifactStoreOptions } from "../s3-artifact-store.js";
import { isKeyPrefix } from "./keys.js";

const MIB = 1024 * 1024;
/** S3's smallest part (except the last) of a multipart upload. */
export const MIN_PART_SIZE_BYTES = 5 * MIB;
/** The largest object a single server-side copy handles, and so this store's limit. */
export const MAX_S3_OBJECT_BYTES = 5 * 1024 ** 3;

const positiveInt = () =>
  z.int({ error: "it must be a positive integer" }).positive("it must be a positive integer");

const object = <T>(what: string) =>
  z.custom<T>((value) => typeof value === "object" && value !== null, { error: `it must be ${what}` });

/** The options of `s3ArtifactStore`, with their defaults. */
export const S3ArtifactStoreOptionsSchema = z.strictObject(
  {
    bucket: z.string({ error: "it needs a bucket name" }).min(1, "it needs a bucket name"),
    prefix: z
      .string({ error: "it must be a string" })
      .refine(
        isKeyPrefix,
        'each "/"-separated segment must be non-empty, use only A-Z, a-z, 0-9, "_", "." and "-", and not be "." or ".."',
      )
      .default("openrath"),
    client: object<S3Client>("an S3Client").optional(),
    endpoint: z.string().min(1, 'it must be a URL such as "http://127.0.0.1:9000"').optional(),
    region: z.string().min(1).optional(),
    forcePathStyle: z.boolean().optional(),
    credentials: z
      .custom<NonNullable<S3ArtifactStoreOptions["credentials"]>>(
        (value) => (typeof value === "object" && value !== null) || typeof value === "function",
        { error: "it must be { accessKeyId, secretAccessKey, sessionToken? } or a credentials provider" },
      )
      .optional(),
    clientConfig: object<NonNullable<S3ArtifactStoreOptions["clientConfig"]>>(
      "an object of S3Client settings",
    ).optional(),
    multipartThresholdBytes: positiveInt().default(8 * MIB),
    partSizeBytes: positiveInt()
      .min(MIN_PART_SIZE_BYTES, `it must be at least 5 MiB (${MIN_PART_SIZE_BYTES}), S3's smallest part`)
      .default(8 * MIB),
    queueSize: positiveInt().default(4),
    maxBytes: positiveInt()
      .max(
        MAX_S3_OBJECT_BYTES,
        `it must be at most 5 GiB (${MAX_S3_OBJECT_BYTES}), the largest object one server-side copy handles`,
      )
      .default(MAX_S3_OBJECT_BYTES),
    listPageSize: positiveInt().default(1000),
  },
  { error: 's3ArtifactStore takes an object such as { bucket: "openrath-artifacts" }' },
);
