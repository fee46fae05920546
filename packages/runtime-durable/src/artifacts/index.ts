export {
  ArtifactError,
  type ArtifactErrorCode,
  type ArtifactErrorOptions,
} from "../contract/artifact-error.js";
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
} from "../contract/artifact-store.js";
export {
  artifactUri,
  checkDigest,
  checkTenant,
  DIGEST_PATTERN,
  EMPTY_DIGEST,
  parseArtifactUri,
  TENANT_PATTERN,
} from "./artifact-id.js";
export {
  type ArtifactSource,
  type ArtifactSourceOptions,
  createArtifactSource,
  digestOf,
} from "./artifact-source.js";
export {
  type ArtifactGarbageReport,
  type ArtifactReferenceSource,
  type CollectArtifactGarbageOptions,
  collectArtifactGarbage,
  DEFAULT_ARTIFACT_GRACE_MS,
} from "./collect-garbage.js";
export {
  DEFAULT_ARTIFACT_MAX_BYTES,
  DEFAULT_SWEEP_AGE_MS,
  type FilesystemArtifactStoreOptions,
  filesystemArtifactStore,
} from "./filesystem-artifact-store.js";
export {
  DEFAULT_OFFLOAD_THRESHOLD_BYTES,
  needsOffload,
  OFFLOADED_KEY,
  type OffloadedString,
  offloadChunk,
  offloadedArtifacts,
  resolveChunk,
} from "./offload.js";
export { type ArtifactOffloadOptions, withArtifactOffload } from "./offloading-store.js";
export { type ReadArtifactOptions, readArtifact, readArtifactText } from "./read-artifact.js";
export { type VerifyArtifactStreamOptions, verifyArtifactStream } from "./verify-stream.js";
