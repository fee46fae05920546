export { Agent } from "./agent.js";
export type { AgentMemory, MemoryKeySpec } from "./agent-memory.js";
export {
  type AgentEvent,
  type AgentOptions,
  type AgentRequestOptions,
  AgentRunError,
  type CallHooks,
  type ModelCall,
  type RunEvent,
  type RunOptions,
  type ToolDispatch,
  type ToolOutcome,
  type ToolRunOverride,
} from "./agent-options.js";
export {
  Budget,
  BudgetExceededError,
  type BudgetHold,
  type BudgetLimits,
  type BudgetRefusal,
  type BudgetStopCode,
} from "./budget.js";
export {
  listWorkspaceFiles,
  readWorkspaceFile,
  runCode,
  runShellCommand,
  SANDBOX_TOOLS,
  workspacePathExists,
  writeWorkspaceFile,
} from "./builtin-tools.js";
export {
  type CallPolicy,
  type PolicyContext,
  PolicyRefusedError,
  type PolicyToolCall,
  type PolicyVerdict,
} from "./call-policy.js";
export type { CallPosition, RunScope } from "./call-position.js";
export {
  type AssistantChunk,
  type CarriedUsage,
  CHUNK_KINDS,
  type Chunk,
  type ChunkBase,
  type ChunkInput,
  type ChunkKind,
  createChunk,
  type EventChunk,
  type Message,
  type ReasoningItem,
  type SystemChunk,
  type ToolCall,
  type ToolResultChunk,
  type UserChunk,
} from "./chunk.js";
export { Compressor, type CompressorOptions } from "./compressor.js";
export {
  BackendClashError,
  MergeConflictError,
  OpenRathError,
  type OpenRathErrorCode,
  type OpenRathErrorOptions,
  SessionLogError,
  UnknownBackendError,
} from "./errors.js";
export { isSessionId } from "./internal/id.js";
export type { JsonObject, JsonValue } from "./json.js";
export {
  type LineageExtras,
  type LineageGraph,
  type LineageGraphEdge,
  type LineageGraphNode,
  LineageNode,
  type LineageOp,
  type LineageSource,
  lineageGraph,
  lineageToDot,
  lineageToJsonl,
  lineageToMermaid,
  lineageToText,
  type Provenance,
  provenance,
  shortId,
} from "./lineage.js";
export {
  type ForgetSelector,
  type MemoryEntry,
  MemoryError,
  type MemoryErrorCode,
  type MemoryHit,
  type MemoryInput,
  type MemoryScope,
  type MemoryV1,
  type RecallOptions,
} from "./memory.js";
export type { RecallCredit } from "./memory-provenance.js";
export {
  type BranchEvent,
  type ObservedFacts,
  type ObservedSpan,
  type ObservedWork,
  type RunObserver,
  setBranchListener,
  type TraceLink,
} from "./observer.js";
export { closeAllSandboxes, Placement } from "./placement.js";
export {
  type FinishReason,
  type ProviderCallOptions,
  type ProviderDelta,
  ProviderError,
  type ProviderErrorCode,
  type ProviderRequest,
  type ProviderResponse,
  type ProviderV1,
  type ResponseFormat,
  type RetryPolicy,
  type ToolChoice,
  type ToolSpec,
} from "./provider.js";
export {
  createRegistry,
  defaultRegistry,
  type MemoryBackends,
  type MemoryBackendV1,
  type MemoryCapabilities,
  type MemoryKey,
  type OpenOptions,
  type Registry,
  type SandboxBackends,
  type SandboxBackendV1,
  type SandboxKey,
} from "./registry.js";
export { type RecordedCall, type Recording, ReplayProvider } from "./replay-provider.js";
export { RunRecorder } from "./run-recorder.js";
export {
  type ExecOptions,
  type ExecResult,
  type FileEntry,
  type SandboxCapabilities,
  SandboxError,
  type SandboxErrorCode,
  type SandboxV1,
} from "./sandbox.js";
export { type Script, ScriptedProvider, type ScriptedTurn } from "./scripted-provider.js";
export {
  defaultSecretProvider,
  envSecrets,
  isSecretRef,
  redactSecrets,
  resolveSecret,
  type SecretProviderV1,
  type SecretRef,
  secret,
  setSecretProvider,
} from "./secret.js";
export { type Route, Selector, type SelectorOptions, type SelectorRule } from "./selector.js";
export {
  type BranchOptions,
  type DeriveOptions,
  type LineageNodeJSON,
  type MergeStrategy,
  Session,
  type SessionJSON,
} from "./session.js";
export {
  type ApprovalContext,
  type ApprovalRule,
  defineTool,
  EFFECT_CLASSES,
  type EffectClass,
  type KeyRule,
  type StandardSchemaLike,
  type Tool,
  type ToolContext,
  type ToolDefinition,
  type ToolErrorKind,
  type ToolInterruptDecision,
  type ToolInterruptRequest,
} from "./tool.js";
export type { ToolPolicy } from "./tool-policy.js";
export { isTrustedLabel, TRUST_LABELS, type TrustLabel, trustLabels, trustOf } from "./trust.js";
export {
  costOf,
  formatUsageTable,
  type ModelPrice,
  type PriceTable,
  priceFor,
  sumUsage,
  type Usage,
  type UsageReport,
  type UsageRow,
  usageReport,
} from "./usage.js";
export { type Module, PassThrough, type Runnable, Workflow } from "./workflow.js";
