import { describe, expect, it } from "vitest";
import type { RunRecord, SubmitInput } from "../contract/run-records.js";
import type { RunStoreV1, SubmitHooks } from "../contract/run-store.js";
import type { Signal, SignalsV1 } from "../contract/signals.js";
import { publishCommits } from "./publishing-store.js";

const run = { id: "r1", planHash: "p1", eventSeq: 1 } as RunRecord;
const input = { tenantId: "t", planHash: "p1" } as SubmitInput;
const tick = () => new Promise((resolve) => setImmediate(resolve));
/** A few turns of the event loop: what is queued for the next one has gone out. */
const turns = async () => {
  for (let i = 0; i < 5; i++) await tick();
};

/** Signals that record what is published (or fail every publish, the way `failing` says). */
function recorder(failing?: "reject" | "throw") {
  const published: Signal[] = [];
  const signals = {
    specVersion: "v1",
    name: "recorder",
    capabilities: { crossProcess: true, livePayloads: true },
    publish: (signal: Signal) => {
      if (failing === "throw") throw new Error("publisher broke");
      published.push(signal);
      return failing === "reject" ? Promise.reject(new Error("publisher away")) : Promise.resolve();
    },
    subscribe: async () => async () => {},
    close: async () => {},
  } as SignalsV1;
  return { signals, published };
}

/**
 * A store whose submission commits, reports the commit when `reports` (as a store with the
 * hook does), then waits for `durable` before it answers (a relaxed commit's WAL flush).
 */
function flushingStore(options: { reports: boolean; created?: boolean }) {
  let flushed!: () => void;
  const durable = new Promise<void>((resolve) => (flushed = resolve));
  const seen: (SubmitHooks | undefined)[] = [];
  const write = async (hooks: SubmitHooks | undefined) => {
    seen.push(hooks);
    await Promise.resolve();
    if (options.reports && options.created !== false) hooks?.onCommitted?.(run);
    await durable;
    return { run, created: options.created ?? true };
  };
  const store = {
    submit: (_input: SubmitInput, hooks?: SubmitHooks) => write(hooks),
    newSessionSubmit: {
      specVersion: "v1",
      submitIfNew: (_input: SubmitInput, _ids: readonly string[], hooks?: SubmitHooks) => write(hooks),
    },
    claimOnSubmit: {
      specVersion: "v1",
      submit: (_input: SubmitInput, _claim: unknown, hooks?: SubmitHooks) => write(hooks),
      submitIfNew: (_input: SubmitInput, _ids: readonly string[], _claim: unknown, hooks?: SubmitHooks) =>
        write(hooks),
    },
  } as unknown as RunStoreV1;
  return { store, flush: () => flushed(), seen };
}

describe("publishCommits: a submission's signals", () => {
  it("go out when the store reports the run committed, before the submission answers", async () => {
    const { signals, published } = recorder();
    const { store, flush } = flushingStore({ reports: true });
    let answered = false;
    const submission = publishCommits(store, signals)
      .submit(input)
      .then((result) => {
        answered = true;
        return result;
      });
    await turns();
    expect(answered).toBe(false);
    expect(published).toEqual([
      { kind: "work", planHash: "p1" },
      { kind: "event", runId: "r1", seq: 1 },
    ]);
    flush();
    expect((await submission).run).toBe(run);
    await tick();
    // Published once: not again after the answer.
    expect(published).toHaveLength(2);
  });

  const claim = { workerId: "w1", leaseMs: 1000 };
  for (const [name, send] of [
    ["newSessionSubmit.submitIfNew", (s: RunStoreV1) => s.newSessionSubmit!.submitIfNew(input, ["s1"])],
    ["claimOnSubmit.submit", (s: RunStoreV1) => s.claimOnSubmit!.submit(input, claim)],
    ["claimOnSubmit.submitIfNew", (s: RunStoreV1) => s.claimOnSubmit!.submitIfNew!(input, ["s1"], claim)],
  ] as const) {
    it(`go out the same way for the fast path ${name}`, async () => {
      const { signals, published } = recorder();
      const { store, flush } = flushingStore({ reports: true });
      const submission = send(publishCommits(store, signals));
      await turns();
      expect(published.map((s) => s.kind)).toEqual(["work", "event"]);
      flush();
      await submission;
      await tick();
      expect(published).toHaveLength(2);
    });
  }

  it("keep the store's feature members: the journal, deployments, access, schedules and webhooks pass through as they are", () => {
    const { signals } = recorder();
    const journal = {} as NonNullable<RunStoreV1["journal"]>;
    const deployments = {} as NonNullable<RunStoreV1["deployments"]>;
    const access = {} as NonNullable<RunStoreV1["access"]>;
    const schedules = {} as NonNullable<RunStoreV1["schedules"]>;
    const webhooks = {} as NonNullable<RunStoreV1["webhooks"]>;
    const messageQueue = {} as NonNullable<RunStoreV1["messageQueue"]>;
    const store = {
      journal,
      deployments,
      access,
      schedules,
      webhooks,
      messageQueue,
    } as unknown as RunStoreV1;
    const published = publishCommits(store, signals);
    expect(published.journal).toBe(journal);
    expect(published.deployments).toBe(deployments);
    expect(published.access).toBe(access);
    expect(published.schedules).toBe(schedules);
    expect(published.webhooks).toBe(webhooks);
    expect(published.messageQueue).toBe(messageQueue);
  });

  it("leave out a fast path the store does not have", () => {
    const { signals } = recorder();
    const plain = { submit: async () => ({ run, created: true }) } as unknown as RunStoreV1;
    const published = publishCommits(plain, signals);
    expect(published.groupCommit).toBeUndefined();
    expect(published.newSessionSubmit).toBeUndefined();
    expect(published.claimOnSubmit).toBeUndefined();
  });

  it("go out after the answer from a store that does not report the commit", async () => {
    const { signals, published } = recorder();
    const { store, flush } = flushingStore({ reports: false });
    const submission = publishCommits(store, signals).submit(input);
    await turns();
    expect(published).toEqual([]);
    flush();
    await submission;
    await turns();
    expect(published).toEqual([
      { kind: "work", planHash: "p1" },
      { kind: "event", runId: "r1", seq: 1 },
    ]);
  });

  it("are not sent when the submission created no run (an earlier one under the key answered)", async () => {
    const { signals, published } = recorder();
    const { store, flush } = flushingStore({ reports: true, created: false });
    const submission = publishCommits(store, signals).submit(input);
    flush();
    expect((await submission).created).toBe(false);
    await tick();
    expect(published).toEqual([]);
  });

  it("reach the caller's own onCommitted too", async () => {
    const { signals } = recorder();
    const { store, flush, seen } = flushingStore({ reports: true });
    const reported: RunRecord[] = [];
    const submission = publishCommits(store, signals).submit(input, {
      onCommitted: (r) => reported.push(r),
    });
    await turns();
    expect(reported).toEqual([run]);
    expect(seen[0]?.onCommitted).toBeTypeOf("function");
    flush();
    await submission;
  });

  it("publish a group commit's event, as a plain step commit's", async () => {
    const { signals, published } = recorder();
    const committed = { ...run, eventSeq: 4 };
    const store = {
      commitStep: async () => committed,
      groupCommit: { specVersion: "v1", commitSteps: async () => committed },
    } as unknown as RunStoreV1;
    const wrapped = publishCommits(store, signals);
    await wrapped.commitStep({ runId: "r1", token: 1, workerId: "w" }, {} as never);
    await wrapped.groupCommit!.commitSteps({ runId: "r1", token: 1, workerId: "w" }, []);
    await turns();
    expect(published).toEqual([
      { kind: "event", runId: "r1", seq: 4 },
      { kind: "event", runId: "r1", seq: 4 },
    ]);
  });

  for (const failing of ["reject", "throw"] as const) {
    it(`never fail the submission when the publish fails (${failing})`, async () => {
      const { signals } = recorder(failing);
      const { store, flush } = flushingStore({ reports: true });
      const submission = publishCommits(store, signals).submit(input);
      await turns();
      flush();
      await expect(submission).resolves.toEqual({ run, created: true });
    });
  }
});
