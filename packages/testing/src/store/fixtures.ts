import { Session } from "@openrath/core";
import { type CompiledPlan, compilePlan, defineWorkflow } from "@openrath/runtime-durable";
import {
  type AuditInput,
  type CheckpointBase,
  type Claim,
  encodeCheckpoint,
  type RunRecord,
  type RunStoreV1,
  type SubmitClaim,
  type SubmitInput,
} from "@openrath/runtime-durable/store";

let counter = 0;

/** A registered two-step plan (`first` → `second`) with a unique name, so tests never share plans. */
export async function registeredPlan(
  store: RunStoreV1,
  name = `suite-${process.pid}-${++counter}`,
): Promise<CompiledPlan> {
  const plan = compilePlan(
    defineWorkflow(name)
      .step("first", (s) => s.append({ kind: "assistant", content: `first of ${name}` }), {
        entry: true,
        next: "second",
      })
      .step("second", (s) => s.append({ kind: "assistant", content: `second of ${name}` })),
  );
  await store.registerPlan(plan.record);
  return plan;
}

/** Options of {@link submit}. */
export interface SubmitFixture {
  readonly tenantId?: string;
  readonly session?: Session;
  readonly idempotencyKey?: string;
  readonly fingerprint?: string;
  readonly priority?: number;
  readonly deadline?: number;
  readonly notBefore?: number;
  /** The project the run belongs to. */
  readonly projectId?: string | null;
  /** The audit record written with the new run. */
  readonly audit?: AuditInput;
  /**
   * Submits through the fast path `store.claimOnSubmit`, which claims the run for this worker when
   * it may start at once. Without it the plain `store.submit` is used.
   */
  readonly claim?: SubmitClaim;
}

/** Submits a run of `plan` on a fresh session (or `options.session`), encoded against the session's head. */
export async function submit(
  store: RunStoreV1,
  plan: CompiledPlan,
  options: SubmitFixture = {},
): Promise<{ run: RunRecord; created: boolean; session: Session }> {
  const session = options.session ?? Session.fromUserMessage(`task ${++counter}`);
  const tenantId = options.tenantId ?? "tenant-a";
  const head = await store.findSessionHead(tenantId, [
    session.id,
    ...session.lineage.parents.map((p) => p.id),
  ]);
  const base = head
    ? {
        id: head.id,
        depth: head.depth,
        chunkIds: head.chunkIds,
        lineage: new Map(head.lineage.map((n) => [n.id, JSON.stringify(n)])),
      }
    : null;
  const { write } = encodeCheckpoint(session, base, { sequence: 0, stepId: null, nextStep: plan.entry });
  const input: SubmitInput = {
    tenantId,
    planHash: plan.hash,
    checkpoint: write,
    fingerprint: options.fingerprint ?? `fp-${session.id}`,
    ...(options.idempotencyKey === undefined ? {} : { idempotencyKey: options.idempotencyKey }),
    ...(options.priority === undefined ? {} : { priority: options.priority }),
    ...(options.deadline === undefined ? {} : { deadline: options.deadline }),
    ...(options.notBefore === undefined ? {} : { notBefore: options.notBefore }),
    ...(options.projectId === undefined ? {} : { projectId: options.projectId }),
    ...(options.audit === undefined ? {} : { audit: options.audit }),
  };
  if (options.claim === undefined) return { ...(await store.submit(input)), session };
  if (!store.claimOnSubmit) throw new Error(`the ${store.name} store has no claimOnSubmit member`);
  return { ...(await store.claimOnSubmit.submit(input, options.claim)), session };
}

/** Claims exactly one run of `plan` for `workerId`; fails the test when none is claimable. */
export async function claimOne(
  store: RunStoreV1,
  plan: CompiledPlan,
  workerId = "worker-1",
  leaseMs = 30_000,
): Promise<Claim> {
  const claims = await store.claim({ workerId, planHashes: [plan.hash], leaseMs, limit: 1 });
  if (claims.length !== 1)
    throw new Error(`expected to claim one run of ${plan.name}, claimed ${claims.length}`);
  return claims[0]!;
}

/** The base the next checkpoint of `run` is encoded against (its latest checkpoint, resolved). */
export async function baseOfRun(
  store: RunStoreV1,
  runId: string,
): Promise<{ base: CheckpointBase; session: Session; sequence: number }> {
  const checkpoint = await store.loadCheckpoint(runId);
  if (!checkpoint) throw new Error(`run ${runId} has no checkpoint`);
  const { restoreSession, baseOf } = await import("@openrath/runtime-durable/store");
  return { base: baseOf(checkpoint), session: restoreSession(checkpoint), sequence: checkpoint.sequence };
}

/** Commits `session` as the run's next checkpoint (fenced by `claim`), moving it to `nextStep`. */
export async function commit(
  store: RunStoreV1,
  claim: Claim,
  session: Session,
  nextStep: string | null,
  stepId = "first",
): Promise<RunRecord> {
  const { base, sequence } = await baseOfRun(store, claim.run.id);
  const { write } = encodeCheckpoint(session, base, { sequence: sequence + 1, stepId, nextStep });
  return store.commitStep(claim.fence, write);
}

/** Waits `ms` milliseconds of real time. */
export const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));
