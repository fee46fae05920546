/**
 * `@openrath/core/backend`: the helpers that backend authors need — options and spec validation
 * over a Standard Schema (one coded error for every backend), sandbox path confinement,
 * output capping and argument checks (commands, file data, code, environments), memory scope
 * arithmetic and extraction, provider delta accumulation and the retrying call wrappers, request
 * fingerprints, backoff, a bounded map and UUIDv7 ids. Application code writes against the main entry; these are for the packages that
 * implement a contract.
 */
export { type BackoffOptions, BoundedMap, backoffDelay } from "./backend-helpers.js";
export { type Branch, createRunScope } from "./call-position.js";
export {
  type CheckOptionsContext,
  type CheckSpecContext,
  checkOptions,
  checkSpec,
  type OptionIssue,
} from "./check-options.js";
export { chunkToMessage } from "./chunk.js";
export { newId } from "./internal/id.js";
export { validateJsonSchema } from "./internal/json-schema.js";
export {
  extractMemories,
  memoryId,
  normalizeScope,
  SCOPE_LEVELS,
  scopeContains,
  scopePath,
  scopeVisible,
} from "./memory.js";
export {
  checkMemoryId,
  checkMemoryScope,
  MAX_MEMORY_ID_LENGTH,
  MAX_RECALL_TOP_K,
  memoryKey,
  type ParsedCommit,
  type ParsedForget,
  type ParsedRecall,
  parseCommitArgs,
  parseForgetArgs,
  parseMemoryInputs,
  parseRecallArgs,
} from "./memory-input.js";
export { callProvider, DeltaAccumulator, retryDelay, streamProvider } from "./provider.js";
export { requestFingerprint } from "./request-fingerprint.js";
export { type HeaderSource, parseRetryAfter } from "./retry-after.js";
export {
  checkEnv,
  checkTimeout,
  confinePath,
  DEFAULT_EXEC_TIMEOUT_MS,
  DEFAULT_MAX_OUTPUT_BYTES,
  decodeTextFile,
  OutputBuffer,
  outside,
  resolveExecTimeout,
  truncationMarker,
} from "./sandbox.js";
export { checkCode, checkCommand, checkWriteData } from "./sandbox-input.js";
export { projectToolResult, toolErrorContent } from "./tool.js";
export { addUsage, ZERO_USAGE } from "./usage.js";
