import { expectTypeOf, test } from "vitest";
import type * as Main from "./index.js";
import type * as Store from "./store.js";

/** The values only a backend needs: exported by `./store`, not by the main entry. */
type BackendValue =
  | "CHAIN_GROWTH_LIMIT"
  | "CHAIN_SLACK_CHUNKS"
  | "DECISION_KINDS"
  | "DEFAULT_SWEEP_AGE_MS"
  | "DIGEST_PATTERN"
  | "EFFECT_STATUSES"
  | "EMPTY_DIGEST"
  | "HeardRuns"
  | "INTERRUPT_KINDS"
  | "MAX_CHAIN_DEPTH"
  | "OFFLOADED_KEY"
  | "PREVIOUS_CHECKPOINT"
  | "TENANT_PATTERN"
  | "TRANSITIONS"
  | "applyChunkOps"
  | "artifactUri"
  | "assertTransition"
  | "baseOf"
  | "canTransition"
  | "canonicalJson"
  | "checkDecision"
  | "checkDigest"
  | "checkResolution"
  | "checkTenant"
  | "contextAfter"
  | "contextOf"
  | "corrupt"
  | "createArtifactSource"
  | "decodeBody"
  | "digestOf"
  | "encodeBody"
  | "encodeCheckpoint"
  | "inProcessSignals"
  | "isChunkRange"
  | "needsContext"
  | "offloadedArtifacts"
  | "packOps"
  | "parseArtifactUri"
  | "resolutionOutcome"
  | "restoreSession"
  | "safeToRepeat"
  | "sha256"
  | "sourcesOf"
  | "topicOf"
  | "verifyArtifactStream";

test("the main entry exports none of the backend-only values, and ./store exports them all", () => {
  expectTypeOf<Extract<keyof typeof Main, BackendValue>>().toBeNever();
  expectTypeOf<Extract<keyof typeof Store, BackendValue>>().toEqualTypeOf<BackendValue>();
});

// Each backend-only type: `./store` has it, the main entry does not (the expected error is its absence).
export type StoreArtifactBody = Store.ArtifactBody;
// @ts-expect-error backend-only: import it from @openrath/runtime-durable/store
export type MainArtifactBody = Main.ArtifactBody;
export type StoreArtifactCapabilities = Store.ArtifactCapabilities;
// @ts-expect-error backend-only: import it from @openrath/runtime-durable/store
export type MainArtifactCapabilities = Main.ArtifactCapabilities;
export type StoreArtifactErrorOptions = Store.ArtifactErrorOptions;
// @ts-expect-error backend-only: import it from @openrath/runtime-durable/store
export type MainArtifactErrorOptions = Main.ArtifactErrorOptions;
export type StoreArtifactGetOptions = Store.ArtifactGetOptions;
// @ts-expect-error backend-only: import it from @openrath/runtime-durable/store
export type MainArtifactGetOptions = Main.ArtifactGetOptions;
export type StoreArtifactInfo = Store.ArtifactInfo;
// @ts-expect-error backend-only: import it from @openrath/runtime-durable/store
export type MainArtifactInfo = Main.ArtifactInfo;
export type StoreArtifactListOptions = Store.ArtifactListOptions;
// @ts-expect-error backend-only: import it from @openrath/runtime-durable/store
export type MainArtifactListOptions = Main.ArtifactListOptions;
export type StoreArtifactPutOptions = Store.ArtifactPutOptions;
// @ts-expect-error backend-only: import it from @openrath/runtime-durable/store
export type MainArtifactPutOptions = Main.ArtifactPutOptions;
export type StoreArtifactReferenceSource = Store.ArtifactReferenceSource;
// @ts-expect-error backend-only: import it from @openrath/runtime-durable/store
export type MainArtifactReferenceSource = Main.ArtifactReferenceSource;
export type StoreArtifactSource = Store.ArtifactSource;
// @ts-expect-error backend-only: import it from @openrath/runtime-durable/store
export type MainArtifactSource = Main.ArtifactSource;
export type StoreArtifactSourceOptions = Store.ArtifactSourceOptions;
// @ts-expect-error backend-only: import it from @openrath/runtime-durable/store
export type MainArtifactSourceOptions = Main.ArtifactSourceOptions;
export type StoreArtifactStat = Store.ArtifactStat;
// @ts-expect-error backend-only: import it from @openrath/runtime-durable/store
export type MainArtifactStat = Main.ArtifactStat;
export type StoreArtifactSweepOptions = Store.ArtifactSweepOptions;
// @ts-expect-error backend-only: import it from @openrath/runtime-durable/store
export type MainArtifactSweepOptions = Main.ArtifactSweepOptions;
export type StoreBodyContent = Store.BodyContent;
// @ts-expect-error backend-only: import it from @openrath/runtime-durable/store
export type MainBodyContent = Main.BodyContent;
export type StoreChainContext = Store.ChainContext;
// @ts-expect-error backend-only: import it from @openrath/runtime-durable/store
export type MainChainContext = Main.ChainContext;
export type StoreCheckpointBase = Store.CheckpointBase;
// @ts-expect-error backend-only: import it from @openrath/runtime-durable/store
export type MainCheckpointBase = Main.CheckpointBase;
export type StoreCheckpointBody = Store.CheckpointBody;
// @ts-expect-error backend-only: import it from @openrath/runtime-durable/store
export type MainCheckpointBody = Main.CheckpointBody;
export type StoreCheckpointRef = Store.CheckpointRef;
// @ts-expect-error backend-only: import it from @openrath/runtime-durable/store
export type MainCheckpointRef = Main.CheckpointRef;
export type StoreCheckpointWrite = Store.CheckpointWrite;
// @ts-expect-error backend-only: import it from @openrath/runtime-durable/store
export type MainCheckpointWrite = Main.CheckpointWrite;
export type StoreChunkOp = Store.ChunkOp;
// @ts-expect-error backend-only: import it from @openrath/runtime-durable/store
export type MainChunkOp = Main.ChunkOp;
export type StoreClaim = Store.Claim;
// @ts-expect-error backend-only: import it from @openrath/runtime-durable/store
export type MainClaim = Main.Claim;
export type StoreClaimList = Store.ClaimList;
// @ts-expect-error backend-only: import it from @openrath/runtime-durable/store
export type MainClaimList = Main.ClaimList;
export type StoreClaimRequest = Store.ClaimRequest;
// @ts-expect-error backend-only: import it from @openrath/runtime-durable/store
export type MainClaimRequest = Main.ClaimRequest;
export type StoreDecisionRecord = Store.DecisionRecord;
// @ts-expect-error backend-only: import it from @openrath/runtime-durable/store
export type MainDecisionRecord = Main.DecisionRecord;
export type StoreDeploymentsV1 = Store.DeploymentsV1;
// @ts-expect-error backend-only: import it from @openrath/runtime-durable/store
export type MainDeploymentsV1 = Main.DeploymentsV1;
export type StoreEffectInput = Store.EffectInput;
// @ts-expect-error backend-only: import it from @openrath/runtime-durable/store
export type MainEffectInput = Main.EffectInput;
export type StoreEffectResolution = Store.EffectResolution;
// @ts-expect-error backend-only: import it from @openrath/runtime-durable/store
export type MainEffectResolution = Main.EffectResolution;
export type StoreEventInput = Store.EventInput;
// @ts-expect-error backend-only: import it from @openrath/runtime-durable/store
export type MainEventInput = Main.EventInput;
export type StoreFence = Store.Fence;
// @ts-expect-error backend-only: import it from @openrath/runtime-durable/store
export type MainFence = Main.Fence;
export type StoreFinishInput = Store.FinishInput;
// @ts-expect-error backend-only: import it from @openrath/runtime-durable/store
export type MainFinishInput = Main.FinishInput;
export type StoreHeartbeatResult = Store.HeartbeatResult;
// @ts-expect-error backend-only: import it from @openrath/runtime-durable/store
export type MainHeartbeatResult = Main.HeartbeatResult;
export type StoreInterruptInput = Store.InterruptInput;
// @ts-expect-error backend-only: import it from @openrath/runtime-durable/store
export type MainInterruptInput = Main.InterruptInput;
export type StoreJournalEntry = Store.JournalEntry;
// @ts-expect-error backend-only: import it from @openrath/runtime-durable/store
export type MainJournalEntry = Main.JournalEntry;
export type StoreJournalEntryInput = Store.JournalEntryInput;
// @ts-expect-error backend-only: import it from @openrath/runtime-durable/store
export type MainJournalEntryInput = Main.JournalEntryInput;
export type StoreJournalKind = Store.JournalKind;
// @ts-expect-error backend-only: import it from @openrath/runtime-durable/store
export type MainJournalKind = Main.JournalKind;
export type StoreJournalStoreV1 = Store.JournalStoreV1;
// @ts-expect-error backend-only: import it from @openrath/runtime-durable/store
export type MainJournalStoreV1 = Main.JournalStoreV1;
export type StoreJournaledInterrupt = Store.JournaledInterrupt;
// @ts-expect-error backend-only: import it from @openrath/runtime-durable/store
export type MainJournaledInterrupt = Main.JournaledInterrupt;
export type StoreLedgeredEffectClass = Store.LedgeredEffectClass;
// @ts-expect-error backend-only: import it from @openrath/runtime-durable/store
export type MainLedgeredEffectClass = Main.LedgeredEffectClass;
export type StoreListRunsQuery = Store.ListRunsQuery;
// @ts-expect-error backend-only: import it from @openrath/runtime-durable/store
export type MainListRunsQuery = Main.ListRunsQuery;
export type StoreMaterializedCheckpoint = Store.MaterializedCheckpoint;
// @ts-expect-error backend-only: import it from @openrath/runtime-durable/store
export type MainMaterializedCheckpoint = Main.MaterializedCheckpoint;
export type StoreOffloadedString = Store.OffloadedString;
// @ts-expect-error backend-only: import it from @openrath/runtime-durable/store
export type MainOffloadedString = Main.OffloadedString;
export type StorePlacementJSON = Store.PlacementJSON;
// @ts-expect-error backend-only: import it from @openrath/runtime-durable/store
export type MainPlacementJSON = Main.PlacementJSON;
export type StorePlanRecord = Store.PlanRecord;
// @ts-expect-error backend-only: import it from @openrath/runtime-durable/store
export type MainPlanRecord = Main.PlanRecord;
export type StoreRetentionPolicy = Store.RetentionPolicy;
// @ts-expect-error backend-only: import it from @openrath/runtime-durable/store
export type MainRetentionPolicy = Main.RetentionPolicy;
export type StoreRetentionResult = Store.RetentionResult;
// @ts-expect-error backend-only: import it from @openrath/runtime-durable/store
export type MainRetentionResult = Main.RetentionResult;
export type StoreRunStoreCapabilities = Store.RunStoreCapabilities;
// @ts-expect-error backend-only: import it from @openrath/runtime-durable/store
export type MainRunStoreCapabilities = Main.RunStoreCapabilities;
export type StoreSignal = Store.Signal;
// @ts-expect-error backend-only: import it from @openrath/runtime-durable/store
export type MainSignal = Main.Signal;
export type StoreSignalTopic = Store.SignalTopic;
// @ts-expect-error backend-only: import it from @openrath/runtime-durable/store
export type MainSignalTopic = Main.SignalTopic;
export type StoreSignalsCapabilities = Store.SignalsCapabilities;
// @ts-expect-error backend-only: import it from @openrath/runtime-durable/store
export type MainSignalsCapabilities = Main.SignalsCapabilities;
export type StoreStepJournalState = Store.StepJournalState;
// @ts-expect-error backend-only: import it from @openrath/runtime-durable/store
export type MainStepJournalState = Main.StepJournalState;
export type StoreSubmitHooks = Store.SubmitHooks;
// @ts-expect-error backend-only: import it from @openrath/runtime-durable/store
export type MainSubmitHooks = Main.SubmitHooks;
export type StoreSubmitInput = Store.SubmitInput;
// @ts-expect-error backend-only: import it from @openrath/runtime-durable/store
export type MainSubmitInput = Main.SubmitInput;
export type StoreSweepResult = Store.SweepResult;
// @ts-expect-error backend-only: import it from @openrath/runtime-durable/store
export type MainSweepResult = Main.SweepResult;
export type StoreVerifyArtifactStreamOptions = Store.VerifyArtifactStreamOptions;
// @ts-expect-error backend-only: import it from @openrath/runtime-durable/store
export type MainVerifyArtifactStreamOptions = Main.VerifyArtifactStreamOptions;
