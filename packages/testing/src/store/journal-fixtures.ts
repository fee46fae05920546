import type {
  Claim,
  EffectInput,
  InterruptInput,
  JournalEntryInput,
  JournalStoreV1,
  RunStoreV1,
} from "@openrath/runtime-durable/store";
import { expect } from "vitest";
import { claimOne, registeredPlan, sleep, submit } from "./fixtures.js";

/** The store's journal members; fails the test when the store claims the capability without them. */
export function journalOf(store: RunStoreV1): JournalStoreV1 {
  expect(store.capabilities.journal, "capabilities.journal").toBe(true);
  const journal = store.journal;
  if (!journal) throw new Error("the store claims capabilities.journal but has no `journal` member");
  expect(journal.specVersion).toBe("v1");
  return journal;
}

/** A submitted and claimed run, with its journal. */
export async function claimedRun(store: RunStoreV1, options: { leaseMs?: number; tenantId?: string } = {}) {
  const plan = await registeredPlan(store);
  const { run } = await submit(store, plan, options.tenantId ? { tenantId: options.tenantId } : {});
  const claim = await claimOne(store, plan, "worker-a", options.leaseMs ?? 30_000);
  return { plan, run, claim, journal: journalOf(store) };
}

/** Lets the claim's lease expire and gives the run to `worker-b`: the old fence is stale from then on. */
export async function takeOver(store: RunStoreV1, claim: Claim, waitMs = 350): Promise<Claim> {
  await sleep(waitMs);
  await store.sweep();
  const claims = await store.claim({
    workerId: "worker-b",
    planHashes: [claim.run.planHash],
    leaseMs: 30_000,
  });
  const fresh = claims.find((c) => c.run.id === claim.run.id);
  if (!fresh) throw new Error(`run ${claim.run.id} was not claimed again after its lease expired`);
  return fresh;
}

/** A model-call journal entry at `position`. */
export function entryAt(
  position: string,
  fingerprint = `fp-${position}`,
  checkpointSeq = 0,
): JournalEntryInput {
  return {
    checkpointSeq,
    position,
    kind: "model",
    fingerprint,
    label: `call at ${position}`,
    result: { content: `answer at ${position}`, toolCalls: [], finishReason: "stop", model: "m" },
  };
}

let effects = 0;

/** An effect to begin (a `send_mail` call); override what the test needs. */
export function effectInput(overrides: Partial<EffectInput> = {}): EffectInput {
  const n = ++effects;
  return {
    checkpointSeq: 0,
    stepId: "first",
    position: `t/branch/0/${n}`,
    tool: "send_mail",
    callId: `call_${n}`,
    effect: "non_idempotent",
    idempotencyKey: null,
    argumentsDigest: `digest-${n}`,
    arguments: { to: "ana@example.com", n },
    ...overrides,
  };
}

/** An interrupt to raise (an approval with a schema), at `position`. */
export function interruptInput(overrides: Partial<InterruptInput> = {}): InterruptInput {
  return {
    checkpointSeq: 0,
    stepId: "first",
    position: "i/0",
    fingerprint: "fp-interrupt",
    kind: "approval",
    request: { question: "Send the invoice?", amount: 120 },
    schema: {
      type: "object",
      properties: { amount: { type: "number", maximum: 1000 } },
      required: ["amount"],
    },
    timeoutMs: null,
    onTimeout: null,
    ...overrides,
  };
}
