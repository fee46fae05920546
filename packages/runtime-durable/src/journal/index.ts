// The step journal, the effect ledger and interrupts (issue 13): contracts, runtime parts and the
// helpers stores share.

export {
  EFFECT_STATUSES,
  type EffectInput,
  type EffectRecord,
  type EffectResolution,
  type EffectResolutionInput,
  type EffectStatus,
  type LedgeredEffectClass,
  type ListEffectsQuery,
} from "../contract/effect-records.js";
export {
  DECISION_KINDS,
  type DecisionInput,
  type DecisionKind,
  type DecisionRecord,
  INTERRUPT_KINDS,
  type InterruptInput,
  type InterruptKind,
  type InterruptRecord,
  type InterruptStatus,
  type JournaledInterrupt,
  type ListInterruptsQuery,
} from "../contract/interrupt-records.js";
export type {
  JournalEntry,
  JournalEntryInput,
  JournalKind,
  Page,
  StepJournalState,
} from "../contract/journal-records.js";
export type { JournalStoreV1 } from "../contract/journal-store.js";
export { EffectOperations } from "../effects/effect-operations.js";
export {
  checkResolution,
  effectOf,
  isLedgered,
  resolutionOutcome,
  safeToRepeat,
} from "../effects/effect-rules.js";
export { InterruptOperations, type OperatorScope } from "../interrupts/interrupt-operations.js";
export { checkDecision, MAX_INTERRUPT_TIMEOUT_MS, storedSchema } from "../interrupts/interrupt-schema.js";
export type { ResolutionEvidence, StepJournal } from "./journal-attempt.js";
export { JOURNAL_EXTENSION, journalMiddleware, journalOf } from "./journal-middleware.js";
export { publishingJournal } from "./publishing-journal.js";
