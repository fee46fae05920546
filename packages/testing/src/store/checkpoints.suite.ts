import { Session, type SessionJSON } from "@openrath/core";
import {
  baseOf,
  encodeCheckpoint,
  PREVIOUS_CHECKPOINT,
  type RunStoreV1,
  restoreSession,
} from "@openrath/runtime-durable/store";
import { expect } from "vitest";
import { describeGroup } from "../internal/describe-group.js";
import { expectOpenRathError } from "../internal/expect-error.js";
import { claimOne, commit, registeredPlan, submit } from "./fixtures.js";
import type { StoreSuiteContext } from "./suite-context.js";

/** A session with forks, a merge, a derived node, nested event data and a placement. */
function richSession(): Session {
  const root = Session.fromUserMessage("Compare two plans", { author: "user" });
  const a = root.fork({ operator: "planner→a" }).append({
    kind: "assistant",
    content: "Plan A",
    author: "a",
    usage: { promptTokens: 3, completionTokens: 2, totalTokens: 5 },
  });
  const b = root
    .fork({ operator: "planner→b", extras: { z: 1, a: { nested: [1, { y: 2, x: 1 }] } } })
    .append({ kind: "event", name: "memory.recall", data: { zeta: { b: 2, a: 1 }, alpha: [3, 2, 1] } });
  const merged = a.merge(b).derive({ op: "workflow", operator: "suite" });
  const json = merged.toJSON();
  return Session.fromJSON({
    ...json,
    placement: { key: "suite-sandbox", spec: { image: "busybox", env: { B: "2", A: "1" } } },
  } as SessionJSON);
}

/** A submitted run of a new session, claimed, with the base its next checkpoint is encoded against. */
async function claimedRun(store: RunStoreV1, text: string) {
  const plan = await registeredPlan(store);
  const session = Session.fromUserMessage(text);
  const { run } = await submit(store, plan, { session });
  const claim = await claimOne(store, plan);
  return { session, run, claim, base: baseOf((await store.loadCheckpoint(run.id))!) };
}

/** Checkpoints as chunk references: restore equality, deltas, dedupe across runs and forks, corruption. */
export function checkpointsSuite(context: StoreSuiteContext): void {
  describeGroup<RunStoreV1>(context, "checkpoints", "store", (group) => {
    group.test("a restored checkpoint is toJSON-identical to the checkpointed Session", async () => {
      const store = group.track(await context.create());
      const plan = await registeredPlan(store);
      const session = richSession();
      const { run } = await submit(store, plan, { session });
      expect(JSON.stringify(restoreSession((await store.loadCheckpoint(run.id))!).toJSON())).toBe(
        JSON.stringify(session.toJSON()),
      );
      const claim = await claimOne(store, plan);
      const grown = session.append({ kind: "assistant", content: "step one", author: "first" });
      await commit(store, claim, grown, "second");
      const back = await store.loadCheckpoint(run.id);
      expect(back!.sequence).toBe(1);
      expect(JSON.stringify(restoreSession(back!).toJSON())).toBe(JSON.stringify(grown.toJSON()));
      expect(JSON.stringify(restoreSession((await store.loadCheckpoint(run.id, 0))!).toJSON())).toBe(
        JSON.stringify(session.toJSON()),
      );
      expect(await store.loadCheckpoint(run.id, 7)).toBeUndefined();
    });

    group.test(
      "an appending step stores only its new chunks and one range of the previous list",
      async () => {
        const store = group.track(await context.create());
        const plan = await registeredPlan(store);
        let session = Session.fromUserMessage("long conversation");
        for (let i = 0; i < 30; i++) session = session.append({ kind: "assistant", content: `turn ${i}` });
        const { run } = await submit(store, plan, { session });
        const claim = await claimOne(store, plan);
        const next = session.append(
          { kind: "user", content: "one more" },
          { kind: "assistant", content: "sure" },
        );
        const base = baseOf((await store.loadCheckpoint(run.id))!);
        const { write } = encodeCheckpoint(next, base, { sequence: 1, stepId: "first", nextStep: "second" });
        expect(write.newChunks.length).toBe(2);
        expect(write.chunkOps).toEqual([[0, 31], next.chunks[31]!.id, next.chunks[32]!.id]);
        expect(write.lineage).toEqual([]);
        await store.commitStep(claim.fence, write);
        expect((await store.loadCheckpoint(run.id))!.chunkIds).toEqual(next.chunks.map((c) => c.id));
      },
    );

    group.test(
      "runs and forks of one session share stored chunks: the next run's checkpoint 0 is a delta",
      async () => {
        const store = group.track(await context.create());
        const plan = await registeredPlan(store);
        let session = Session.fromUserMessage("chat");
        for (let i = 0; i < 10; i++) session = session.append({ kind: "assistant", content: `reply ${i}` });
        const first = await submit(store, plan, { session });
        const claim = await claimOne(store, plan);
        const answered = session.append({ kind: "assistant", content: "final" });
        await commit(store, claim, answered, null, "second");
        await store.finish(claim.fence, { status: "succeeded" });

        const followUp = answered.append({ kind: "user", content: "and then?" });
        const head = await store.findSessionHead("tenant-a", [followUp.id]);
        expect(head).toMatchObject({ runId: first.run.id, sequence: 1 });
        const { write } = encodeCheckpoint(followUp, baseOf(head!), {
          sequence: 0,
          stepId: null,
          nextStep: "first",
        });
        expect(write.newChunks.map((c) => (c as { content?: unknown }).content)).toEqual(["and then?"]);

        const fork = answered.fork();
        const forkHead = await store.findSessionHead("tenant-a", [
          fork.id,
          ...fork.lineage.parents.map((p) => p.id),
        ]);
        expect(forkHead?.id).toBe(head!.id);
        const forked = encodeCheckpoint(fork, baseOf(forkHead!), {
          sequence: 0,
          stepId: null,
          nextStep: "first",
        });
        expect(forked.write.newChunks).toEqual([]);
        const { run } = await submit(store, plan, { session: fork });
        expect(JSON.stringify(restoreSession((await store.loadCheckpoint(run.id))!).toJSON())).toBe(
          JSON.stringify(fork.toJSON()),
        );
        expect(await store.findSessionHead("tenant-b", [fork.id])).toBeUndefined();
      },
    );

    group.test("a replaced transcript (compression) restores exactly", async () => {
      const store = group.track(await context.create());
      const plan = await registeredPlan(store);
      let session = Session.fromUserMessage("to be summarized");
      for (let i = 0; i < 5; i++) session = session.append({ kind: "assistant", content: `detail ${i}` });
      const { run } = await submit(store, plan, { session });
      const claim = await claimOne(store, plan);
      const summary = session.derive({
        op: "compress",
        operator: "compressor",
        chunks: [{ kind: "user", content: "summary of details" }],
      });
      await commit(store, claim, summary, "second");
      expect(JSON.stringify(restoreSession((await store.loadCheckpoint(run.id))!).toJSON())).toBe(
        JSON.stringify(summary.toJSON()),
      );
    });

    // The fast path groupCommit: a store without it gets one commitStep per step (proven above).
    if (context.capabilities.groupCommit) {
      group.test(
        "groupCommit.commitSteps stores every step's checkpoint, each against the one before, with one event each",
        async () => {
          const store = group.track(await context.create());
          const { session, run, claim, base: first } = await claimedRun(store, "batch");
          const s1 = session.append({ kind: "assistant", content: "one" });
          const s2 = s1.fork({ operator: "side" }).append({ kind: "assistant", content: "two" });
          const s3 = s2.append({ kind: "event", name: "step.note", data: { n: 3 } });
          const sessions = [s1, s2, s3];
          let base = first;
          const writes = sessions.map((s, i) => {
            const encoded = encodeCheckpoint(s, base, {
              sequence: i + 1,
              stepId: `s${i}`,
              nextStep: `s${i + 1}`,
            });
            base = encoded.next(PREVIOUS_CHECKPOINT);
            return encoded.write;
          });
          expect(writes.slice(1).map((w) => [w.baseId, w.newChunks.length])).toEqual([
            [PREVIOUS_CHECKPOINT, 1],
            [PREVIOUS_CHECKPOINT, 1],
          ]);
          const committed = await store.groupCommit!.commitSteps(claim.fence, writes);
          expect(committed).toMatchObject({
            version: claim.run.version + 1,
            checkpointSeq: 3,
            nextStep: "s3",
            eventSeq: claim.run.eventSeq + 3,
          });
          for (const [i, s] of sessions.entries()) {
            const back = await store.loadCheckpoint(run.id, i + 1);
            expect(JSON.stringify(restoreSession(back!).toJSON())).toBe(JSON.stringify(s.toJSON()));
          }
          const events = (await store.readEvents(run.id, { after: claim.run.eventSeq })).map((e) => [
            e.seq,
            e.type,
          ]);
          expect(events).toEqual([1, 2, 3].map((i) => [claim.run.eventSeq + i, "run.checkpoint"]));
          // A later single commit continues the chain from the batch's last checkpoint.
          const s4 = s3.append({ kind: "assistant", content: "four" });
          expect(await commit(store, claim, s4, null, "s3")).toMatchObject({ checkpointSeq: 4 });
          expect(JSON.stringify(restoreSession((await store.loadCheckpoint(run.id))!).toJSON())).toBe(
            JSON.stringify(s4.toJSON()),
          );
        },
      );

      group.test(
        "a bad batch of step commits is invalid_argument, a stale one stale_fence, and neither changes the run",
        async () => {
          const store = group.track(await context.create());
          const { session, run, claim, base } = await claimedRun(store, "bad batch");
          const first = encodeCheckpoint(session.append({ kind: "assistant", content: "a" }), base, {
            sequence: 1,
            stepId: "first",
            nextStep: "second",
          });
          const second = encodeCheckpoint(
            session.append({ kind: "assistant", content: "a" }, { kind: "assistant", content: "b" }),
            first.next(PREVIOUS_CHECKPOINT),
            { sequence: 2, stepId: "second", nextStep: "third" },
          );
          const gap = { ...second.write, sequence: 3 };
          for (const [name, writes] of [
            ["empty", []],
            ["first names the previous", [second.write]],
            ["sequence gap", [first.write, gap]],
          ] as const) {
            await expectOpenRathError(
              () => store.groupCommit!.commitSteps(claim.fence, writes),
              "invalid_argument",
              `commitSteps(${name})`,
            );
          }
          await expectOpenRathError(
            () =>
              store.groupCommit!.commitSteps({ ...claim.fence, token: claim.fence.token + 1 }, [
                first.write,
                second.write,
              ]),
            "stale_fence",
            "commitSteps(stale token)",
          );
          expect(await store.getRun(run.id)).toMatchObject({ version: claim.run.version, checkpointSeq: 0 });
          expect(await store.loadCheckpoint(run.id, 1)).toBeUndefined();
        },
      );

      group.test(
        "the plain path still commits on a store with groupCommit: commitStep per step stores what one group commit stores",
        async () => {
          const store = group.track(await context.create());
          const plainRun = await claimedRun(store, "one by one");
          const groupedRun = await claimedRun(store, "together");
          const steps = (s: Session) => {
            const s1 = s.append({ kind: "assistant", content: "one" });
            const s2 = s1.append({ kind: "assistant", content: "two" });
            return [s1, s2, s2.append({ kind: "assistant", content: "three" })];
          };
          const plainSessions = steps(plainRun.session);
          for (const [i, s] of plainSessions.entries())
            await commit(store, plainRun.claim, s, i === 2 ? null : `s${i + 1}`, `s${i}`);
          const groupedSessions = steps(groupedRun.session);
          let base = groupedRun.base;
          const writes = groupedSessions.map((s, i) => {
            const encoded = encodeCheckpoint(s, base, {
              sequence: i + 1,
              stepId: `s${i}`,
              nextStep: i === 2 ? null : `s${i + 1}`,
            });
            base = encoded.next(PREVIOUS_CHECKPOINT);
            return encoded.write;
          });
          await store.groupCommit!.commitSteps(groupedRun.claim.fence, writes);
          const plain = (await store.getRun(plainRun.run.id))!;
          const grouped = (await store.getRun(groupedRun.run.id))!;
          // One version bump per plain commit, one for the group; the same checkpoints and events.
          expect(plain.version).toBe(plainRun.claim.run.version + 3);
          expect(grouped.version).toBe(groupedRun.claim.run.version + 1);
          for (const run of [plain, grouped]) expect(run).toMatchObject({ checkpointSeq: 3, nextStep: null });
          for (let i = 1; i <= 3; i++) {
            const a = restoreSession((await store.loadCheckpoint(plain.id, i))!);
            const b = restoreSession((await store.loadCheckpoint(grouped.id, i))!);
            expect(b.toJSON()).toEqual(groupedSessions[i - 1]!.toJSON());
            expect(a.toJSON()).toEqual(plainSessions[i - 1]!.toJSON());
          }
          const types = async (id: string) => (await store.readEvents(id)).map((e) => e.type);
          expect(await types(plain.id)).toEqual(await types(grouped.id));
        },
      );
    } else
      group.skip(
        "groupCommit.commitSteps stores every step's checkpoint, each against the one before, with one event each",
        "no groupCommit capability",
      );
  });
}
