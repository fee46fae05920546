/** `@openrath/artifacts-s3`: the OpenRath artifact store on S3 and S3-compatible servers. */
export {
  MAX_S3_OBJECT_BYTES,
  MIN_PART_SIZE_BYTES,
  type S3ArtifactCredentials,
  type S3ArtifactStoreOptions,
  s3ArtifactStore,
} from "./s3-artifact-store.js";
