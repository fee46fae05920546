import { Session } from "@openrath/core";
import type { RunStoreV1 } from "@openrath/runtime-durable/store";
import { expect } from "vitest";
import { describeGroup } from "../internal/describe-group.js";
import { expectOpenRathError } from "../internal/expect-error.js";
import { commit } from "./fixtures.js";
import { claimedRun, effectInput, entryAt, takeOver } from "./journal-fixtures.js";
import type { StoreSuiteContext } from "./suite-context.js";

/** The step journal: entries by visit and position, idempotent recording, fencing, pruning of committed visits. */
export function journalSuite(context: StoreSuiteContext): void {
  describeGroup<RunStoreV1>(context, "step journal", "store", (group) => {
    group.test(
      "openStep gives the visit and its entries; record keeps position, kind, fingerprint and result",
      async () => {
        const store = group.track(await context.create());
        const { claim, journal } = await claimedRun(store);
        expect(await journal.openStep(claim.fence)).toEqual({
          checkpointSeq: 0,
          entries: [],
          interrupts: [],
        });
        await journal.record(claim.fence, [entryAt("m/a/0")]);
        await journal.record(claim.fence, [
          {
            ...entryAt("t/a/0/0"),
            kind: "tool",
            result: { content: "{}", isError: false },
          },
        ]);
        const state = await journal.openStep(claim.fence);
        const byPosition = Object.fromEntries(state.entries.map((e) => [e.position, e]));
        expect(Object.keys(byPosition).sort()).toEqual(["m/a/0", "t/a/0/0"]);
        expect(byPosition["m/a/0"]).toMatchObject({
          runId: claim.run.id,
          checkpointSeq: 0,
          kind: "model",
          fingerprint: "fp-m/a/0",
          label: "call at m/a/0",
          result: entryAt("m/a/0").result,
          fencingToken: claim.fence.token,
        });
        expect(byPosition["t/a/0/0"]!.result).toEqual({ content: "{}", isError: false });
      },
    );

    group.test(
      "several entries are recorded in one write; the ledger's writes carry entries too",
      async () => {
        const store = group.track(await context.create());
        const { claim, journal } = await claimedRun(store);
        await journal.record(claim.fence, [entryAt("m/b/0"), entryAt("m/b/1"), entryAt("m/b/2")]);
        const begun = await journal.beginEffect(claim.fence, effectInput({ position: "t/b/2/0" }), [
          entryAt("m/c/0"),
        ]);
        // A begin that finds its effect already there still records what it carries.
        await journal.beginEffect(claim.fence, effectInput({ position: "t/b/2/0" }), [entryAt("m/c/1")]);
        await journal.completeEffect(claim.fence, begun.effect.id, { content: "{}", isError: false }, [
          entryAt("m/c/2"),
          { ...entryAt("t/b/2/0"), kind: "tool", result: { content: "{}", isError: false } },
        ]);
        const positions = (await journal.openStep(claim.fence)).entries.map((e) => e.position).sort();
        expect(positions).toEqual(["m/b/0", "m/b/1", "m/b/2", "m/c/0", "m/c/1", "m/c/2", "t/b/2/0"]);
      },
    );

    group.test(
      "recording a position again: same fingerprint is a no-op, another is journal_conflict and changes nothing",
      async () => {
        const store = group.track(await context.create());
        const { claim, journal } = await claimedRun(store);
        await journal.record(claim.fence, [entryAt("m/a/0")]);
        await journal.record(claim.fence, [entryAt("m/a/0")]);
        await expectOpenRathError(
          () => journal.record(claim.fence, [entryAt("m/a/0", "another-fingerprint")]),
          "journal_conflict",
          "record at a taken position with another fingerprint",
        );
        const { entries } = await journal.openStep(claim.fence);
        expect(entries.map((e) => e.fingerprint)).toEqual(["fp-m/a/0"]);
      },
    );

    group.test(
      "a stale fence cannot open a step or record; what the old lease recorded is kept for the new one",
      async () => {
        const store = group.track(await context.create());
        const { claim, journal } = await claimedRun(store, { leaseMs: 150 });
        await journal.record(claim.fence, [entryAt("m/a/0")]);
        const fresh = await takeOver(store, claim);
        await expectOpenRathError(
          () => journal.record(claim.fence, [entryAt("m/a/1")]),
          "stale_fence",
          "record with a stale token",
        );
        await expectOpenRathError(
          () => journal.openStep(claim.fence),
          "stale_fence",
          "openStep with a stale token",
        );
        const state = await journal.openStep(fresh.fence);
        expect(state.entries.map((e) => [e.position, e.fencingToken])).toEqual([
          ["m/a/0", claim.fence.token],
        ]);
      },
    );

    group.test("an expired lease is stale for the journal before anyone takes the run over", async () => {
      const store = group.track(await context.create());
      const { claim, journal } = await claimedRun(store, { leaseMs: 150 });
      await new Promise((r) => setTimeout(r, 350));
      await expectOpenRathError(
        () => journal.record(claim.fence, [entryAt("m/a/0")]),
        "stale_fence",
        "record after expiry",
      );
    });

    group.test(
      "opening the next step drops the journal of committed visits, not of the current one",
      async () => {
        const store = group.track(await context.create());
        const { claim, journal } = await claimedRun(store);
        await journal.record(claim.fence, [entryAt("m/a/0", "fp", 0)]);
        await commit(store, claim, Session.fromUserMessage("after the first step"), "second");
        const state = await journal.openStep(claim.fence);
        expect(state.checkpointSeq).toBe(1);
        expect(state.entries).toEqual([]);
        await journal.record(claim.fence, [entryAt("m/a/0", "fp", 1)]);
        expect((await journal.openStep(claim.fence)).entries.map((e) => e.checkpointSeq)).toEqual([1]);
      },
    );
  });
}
