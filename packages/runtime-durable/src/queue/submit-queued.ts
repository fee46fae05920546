import { OpenRathError } from "@openrath/core";
import { baseOf, encodeCheckpoint, restoreSession } from "../checkpoint/delta-codec.js";
import { type QueuedMessage, queuedMessageKey } from "../contract/message-queue.js";
import type { RunStoreV1 } from "../contract/run-store.js";
import { sha256 } from "../internal/canonical.js";

/** How many ready messages one call submits at most. */
const BATCH = 16;
/** How long a taken message stays hidden from other submitters. */
const LEASE_MS = 30_000;

/** What became of one message: a run, or `undefined` (failed for good, or its session busy again). */
async function submitOne(store: RunStoreV1, message: QueuedMessage): Promise<string | undefined> {
  const queue = store.messageQueue!;
  const fail = async (code: string, text: string) => {
    await queue.complete(message.id, { error: { code, message: text } });
    return undefined;
  };
  const head = await store.findSessionHead(message.tenantId, [message.sessionId]);
  if (!head) return fail("session_not_found", `Session ${message.sessionId} has no checkpoint to continue.`);
  const deployments = store.capabilities.deployments ? store.deployments : undefined;
  const deployment = await deployments?.current(message.workflow);
  const plan = deployment ? await store.getPlan(deployment.hash) : undefined;
  if (!plan)
    return fail("unknown_plan", `No workflow named ${JSON.stringify(message.workflow)} is deployed.`);
  const session = restoreSession(head).append({ kind: "user", content: message.input });
  const { write } = encodeCheckpoint(session, baseOf(head), {
    sequence: 0,
    stepId: null,
    nextStep: String(plan.definition.entry),
  });
  try {
    const { run } = await store.submit({
      tenantId: message.tenantId,
      planHash: plan.hash,
      checkpoint: write,
      priority: message.priority,
      // The same run however often a submitter dies between this and `complete`.
      idempotencyKey: queuedMessageKey(message.id),
      fingerprint: sha256(message.id),
      metadata: { ...message.metadata, queuedMessage: message.id },
      ...(message.projectId === null ? {} : { projectId: message.projectId }),
    });
    await queue.complete(message.id, { runId: run.id });
    return run.id;
  } catch (error) {
    // Another run took the session meanwhile: the message waits for that one to end.
    if (OpenRathError.isInstance(error, "session_busy")) {
      await queue.release(message.id);
      return undefined;
    }
    throw error;
  }
}

/**
 * Submits the messages queued behind sessions whose active run has ended (`capabilities.messageQueue`),
 * each as its session's next run: what a worker does on its tick. At most one per session per call,
 * oldest first. A store without the queue submits nothing.
 *
 * @returns the runs started.
 */
export async function submitQueuedMessages(store: RunStoreV1): Promise<string[]> {
  const queue = store.capabilities.messageQueue ? store.messageQueue : undefined;
  if (!queue) return [];
  const ready = await queue.takeReady(BATCH, LEASE_MS);
  const runs: string[] = [];
  for (const message of ready) {
    const runId = await submitOne(store, message);
    if (runId) runs.push(runId);
  }
  return runs;
}
