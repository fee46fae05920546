export { ArtifactError, type ArtifactErrorCode, type ArtifactErrorOptions } from "./artifact-error.js";
export {
  artifactUri,
  checkDigest,
  checkTenant,
  DIGEST_PATTERN,
  EMPTY_DIGEST,
  parseArtifactUri,
  TENANT_PATTERN,
} from "./artifact-id.js";
export { type ArtifactSource, type ArtifactSourceOptions, createArtifactSource } from "./artifact-source.js";
export type {
  ArtifactBody,
  ArtifactCapabilities,
  ArtifactGetOptions,
  ArtifactInfo,
  ArtifactListOptions,
  ArtifactPutOptions,
  ArtifactStat,
  ArtifactStoreV1,
  ArtifactSweepOptions,
} from "./artifact-store.js";
export {
  DEFAULT_ARTIFACT_MAX_BYTES,
  DEFAULT_SWEEP_AGE_MS,
  type FilesystemArtifactStoreOptions,
  filesystemArtifactStore,
} from "./filesystem-artifact-store.js";
export { type ReadArtifactOptions, readArtifact, readArtifactText } from "./read-artifact.js";
export { type VerifyArtifactStreamOptions, verifyArtifactStream } from "./verify-stream.js";
