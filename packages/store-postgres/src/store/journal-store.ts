import type { JournalStoreV1 } from "@openrath/runtime-durable/store";
import type { StoreContext } from "./context.js";
import { getEffect, listEffects, resolveEffect } from "./effect-reviews.js";
import { beginEffect, completeEffect, dispatchEffect, reviewEffect } from "./effects.js";
import {
  decideInterrupt,
  expireInterrupts,
  getInterrupt,
  listInterrupts,
  raiseInterrupt,
  stepInterrupts,
} from "./interrupts.js";
import { type JournalDurability, openStep, recordEntries } from "./journal.js";

/**
 * The store's {@link JournalStoreV1}: the same SQL on PostgreSQL and PGlite. `run` is the store's
 * guard (closed store, driver errors mapped to `store_unavailable`); `option` how the journal's
 * frequent writes commit on a server (see {@link JournalDurability}). On PGlite every journal
 * write commits strictly, whatever the option says: PGlite has no WAL writer, so a relaxed commit
 * stays in the process's memory until a later strict one, and a kill -9 of the process loses it —
 * the loop would pay for the calls it had gone past again. There a strict commit costs a write to
 * the WAL file, not a flush to disk (PGlite runs without fsync). See ADR 0016.
 */
export function journalStore(
  c: StoreContext,
  run: <T>(work: () => Promise<T>) => Promise<T>,
  option: JournalDurability = "relaxed",
): JournalStoreV1 {
  const durability: JournalDurability = c.multiProcess ? option : "strict";
  // Not frozen: wrappers (signals publishing, worker hand-offs) may proxy single members.
  return {
    specVersion: "v1" as const,
    openStep: (fence) => run(() => openStep(c, fence, durability)),
    record: (fence, entries) => run(() => recordEntries(c, fence, entries, durability)),
    beginEffect: (fence, input, entries = []) => run(() => beginEffect(c, fence, input, entries, durability)),
    dispatchEffect: (fence, id) => run(() => dispatchEffect(c, fence, id)),
    completeEffect: (fence, id, outcome, entries) =>
      run(() => completeEffect(c, fence, id, outcome, entries, durability)),
    reviewEffect: (fence, id) => run(() => reviewEffect(c, fence, id)),
    raiseInterrupt: (fence, input) => run(() => raiseInterrupt(c, fence, input)),
    getEffect: (id, tenantId) => run(() => getEffect(c, id, tenantId)),
    listEffects: (query) => run(() => listEffects(c, query)),
    resolveEffect: (id, resolution, tenantId, audited) =>
      run(() => resolveEffect(c, id, resolution, tenantId, audited)),
    getInterrupt: (id, tenantId) => run(() => getInterrupt(c, id, tenantId)),
    listInterrupts: (query) => run(() => listInterrupts(c, query)),
    decideInterrupt: (id, decision, tenantId, audited) =>
      run(() => decideInterrupt(c, id, decision, tenantId, audited)),
    expireInterrupts: () => run(() => expireInterrupts(c)),
    stepInterrupts: (runId, seq) => run(() => stepInterrupts(c, runId, seq)),
  } satisfies JournalStoreV1;
}
