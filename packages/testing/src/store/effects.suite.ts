import type { RunStoreV1 } from "@openrath/runtime-durable/store";
import { expect } from "vitest";
import { describeGroup } from "../internal/describe-group.js";
import { expectOpenRathError } from "../internal/expect-error.js";
import { claimOne } from "./fixtures.js";
import { claimedRun, effectInput, entryAt, takeOver } from "./journal-fixtures.js";
import type { StoreSuiteContext } from "./suite-context.js";

const ok = { content: '{"sent":true}', isError: false };

/** The effect ledger: dispatch and outcome, idempotency keys, ambiguity by lease, review and resolution, fencing. */
export function effectsSuite(context: StoreSuiteContext): void {
  describeGroup<RunStoreV1>(context, "effect ledger", "store", (group) => {
    group.test(
      "an effect goes dispatched → succeeded, recorded with its journal entry in one write",
      async () => {
        const store = group.track(await context.create());
        const { claim, journal } = await claimedRun(store);
        const input = effectInput();
        const { effect, created } = await journal.beginEffect(claim.fence, input);
        expect(created).toBe(true);
        expect(effect).toMatchObject({
          runId: claim.run.id,
          tenantId: claim.run.tenantId,
          status: "dispatched",
          tool: "send_mail",
          effect: "non_idempotent",
          idempotencyKey: null,
          argumentsDigest: input.argumentsDigest,
          arguments: input.arguments,
          fencingToken: claim.fence.token,
          workerId: "worker-a",
          dispatches: 1,
          outcome: null,
          resolution: null,
        });
        const entry = { ...entryAt(input.position), kind: "tool" as const, result: ok };
        const done = await journal.completeEffect(claim.fence, effect.id, ok, [entry]);
        expect(done).toMatchObject({ status: "succeeded", outcome: ok });
        expect((await journal.openStep(claim.fence)).entries.map((e) => e.position)).toEqual([
          input.position,
        ]);
        const failed = await journal.beginEffect(claim.fence, effectInput());
        const outcome = { content: '{"ok":false}', isError: true };
        expect(
          await journal.completeEffect(claim.fence, failed.effect.id, outcome, [entryAt("t/x")]),
        ).toMatchObject({
          status: "failed",
          outcome,
        });
      },
    );

    group.test(
      "a key names one call: reuse with the same arguments returns the effect, other arguments are a conflict",
      async () => {
        const store = group.track(await context.create());
        const { claim, journal } = await claimedRun(store);
        const input = effectInput({ effect: "idempotent", idempotencyKey: "order-17" });
        const first = await journal.beginEffect(claim.fence, input);
        await journal.completeEffect(claim.fence, first.effect.id, ok, [entryAt(input.position)]);
        const again = await journal.beginEffect(claim.fence, {
          ...input,
          position: "t/elsewhere/3/0",
          callId: "other",
        });
        expect(again.created).toBe(false);
        expect(again.effect).toMatchObject({ id: first.effect.id, status: "succeeded", outcome: ok });
        await expectOpenRathError(
          () => journal.beginEffect(claim.fence, { ...input, argumentsDigest: "different" }),
          "effect_conflict",
          "beginEffect with a used key and other arguments",
        );
        await expectOpenRathError(
          () => journal.beginEffect(claim.fence, { ...input, tool: "other_tool" }),
          "effect_conflict",
          "beginEffect with a used key and another tool",
        );
        const all = await journal.listEffects({
          tenantId: claim.run.tenantId,
          runId: claim.run.id,
          status: ["succeeded", "dispatched"],
        });
        expect(all.items.map((e) => e.id)).toEqual([first.effect.id]);
      },
    );

    group.test(
      "unkeyed effects are one per visit and position: beginning again returns the same one",
      async () => {
        const store = group.track(await context.create());
        const { claim, journal } = await claimedRun(store);
        const input = effectInput();
        const first = await journal.beginEffect(claim.fence, input);
        const again = await journal.beginEffect(claim.fence, input);
        expect(again).toMatchObject({
          created: false,
          effect: { id: first.effect.id, status: "dispatched" },
        });
        const elsewhere = await journal.beginEffect(claim.fence, {
          ...input,
          position: `${input.position}-b`,
        });
        expect(elsewhere.created).toBe(true);
      },
    );

    group.test(
      "ambiguity is judged by the lease: after a takeover only safe classes are sent again",
      async () => {
        const store = group.track(await context.create());
        const { claim, journal } = await claimedRun(store, { leaseMs: 150 });
        const unsafe = await journal.beginEffect(claim.fence, effectInput());
        const unkeyed = await journal.beginEffect(claim.fence, effectInput({ effect: "idempotent" }));
        const keyed = await journal.beginEffect(
          claim.fence,
          effectInput({ effect: "idempotent", idempotencyKey: "k-1" }),
        );
        const read = await journal.beginEffect(claim.fence, effectInput({ effect: "read_only" }));
        // The same lease never judges its own calls ambiguous, however long they take.
        await expectOpenRathError(
          () => journal.dispatchEffect(claim.fence, read.effect.id),
          "effect_conflict",
          "dispatch in flight",
        );
        const fresh = await takeOver(store, claim);
        for (const [what, e] of [
          ["a non_idempotent effect", unsafe],
          ["an unkeyed idempotent effect", unkeyed],
        ] as const) {
          await expectOpenRathError(
            () => journal.dispatchEffect(fresh.fence, e.effect.id),
            "effect_conflict",
            `re-dispatch of ${what}`,
          );
          expect((await journal.getEffect(e.effect.id))?.status).toBe("dispatched");
        }
        for (const e of [keyed, read]) {
          const again = await journal.dispatchEffect(fresh.fence, e.effect.id);
          expect(again).toMatchObject({
            status: "dispatched",
            fencingToken: fresh.fence.token,
            workerId: "worker-b",
            dispatches: 2,
          });
        }
        await expectOpenRathError(
          () => journal.completeEffect(claim.fence, keyed.effect.id, ok, [entryAt("t/late")]),
          "stale_fence",
          "completeEffect by the stale worker",
        );
        expect((await journal.getEffect(keyed.effect.id))?.status).toBe("dispatched");
      },
    );

    group.test(
      "an ambiguous effect goes under review and parks the run; resolving the last one resumes it",
      async () => {
        const store = group.track(await context.create());
        const { plan, claim, journal } = await claimedRun(store, { leaseMs: 150 });
        const a = await journal.beginEffect(claim.fence, effectInput());
        const b = await journal.beginEffect(claim.fence, effectInput());
        const fresh = await takeOver(store, claim);
        const parked = await journal.reviewEffect(fresh.fence, a.effect.id);
        expect(parked).toMatchObject({ status: "needs_review", leaseHolder: null });
        const events = await store.readEvents(claim.run.id);
        expect(events.at(-1)).toMatchObject({
          type: "run.effect.review",
          data: { from: "running", to: "needs_review", effectId: a.effect.id, tool: "send_mail" },
        });
        await expectOpenRathError(
          () => journal.reviewEffect(fresh.fence, b.effect.id),
          "stale_fence",
          "review after the park",
        );
        // The second effect goes under review on the next claim.
        await store.unpark(claim.run.id, { actor: "test", reason: "look at the second one" });
        const third = await claimOne(store, plan, "worker-c");
        await journal.reviewEffect(third.fence, b.effect.id);
        const inbox = await journal.listEffects({ tenantId: claim.run.tenantId });
        expect(inbox.items.map((e) => e.id).sort()).toEqual([a.effect.id, b.effect.id].sort());

        const first = await journal.resolveEffect(a.effect.id, {
          kind: "succeeded",
          result: { id: "msg-1" },
          actor: "ana",
          reason: "sent, per the provider's log",
        });
        expect(first.effect).toMatchObject({
          status: "succeeded",
          resolution: { kind: "succeeded", actor: "ana", result: { id: "msg-1" } },
        });
        expect(first.effect.outcome?.isError).toBe(false);
        expect(JSON.parse(first.effect.outcome!.content)).toEqual({ id: "msg-1" });
        expect(first.run.status).toBe("needs_review");
        const second = await journal.resolveEffect(b.effect.id, { kind: "retry", actor: "ana" });
        expect(second.effect).toMatchObject({
          status: "prepared",
          outcome: null,
          resolution: { kind: "retry" },
        });
        expect(second.run.status).toBe("queued");
        const resolved = (await store.readEvents(claim.run.id)).filter(
          (e) => e.type === "run.effect.resolved",
        );
        expect(resolved.map((e) => e.data)).toMatchObject([
          { effectId: a.effect.id, kind: "succeeded", actor: "ana", remaining: 1 },
          {
            effectId: b.effect.id,
            kind: "retry",
            actor: "ana",
            remaining: 0,
            from: "needs_review",
            to: "queued",
          },
        ]);
        const next = await claimOne(store, plan, "worker-d");
        expect(await journal.dispatchEffect(next.fence, b.effect.id)).toMatchObject({
          status: "dispatched",
          dispatches: 2,
        });
      },
    );

    group.test(
      "resolving an effect not under review, an unknown one or with a bad resolution changes nothing",
      async () => {
        const store = group.track(await context.create());
        const { claim, journal } = await claimedRun(store, { leaseMs: 150 });
        const e = await journal.beginEffect(claim.fence, effectInput());
        const before = await journal.getEffect(e.effect.id);
        await expectOpenRathError(
          () => journal.resolveEffect(e.effect.id, { kind: "failed", reason: "x", actor: "ana" }),
          "effect_not_under_review",
          "resolving a dispatched effect",
        );
        await expectOpenRathError(
          () =>
            journal.resolveEffect("00000000-0000-7000-8000-000000000000", { kind: "retry", actor: "ana" }),
          "effect_not_found",
          "resolving an unknown effect",
        );
        const fresh = await takeOver(store, claim);
        await journal.reviewEffect(fresh.fence, e.effect.id);
        for (const [what, bad] of [
          ["no actor", { kind: "retry", actor: "" }],
          ["failed without a reason", { kind: "failed", actor: "ana" }],
          ["an unknown kind", { kind: "maybe", actor: "ana" }],
          ["a result that is not JSON", { kind: "succeeded", actor: "ana", result: () => 1 }],
        ] as const) {
          await expectOpenRathError(
            () => journal.resolveEffect(e.effect.id, bad as never),
            "invalid_argument",
            what,
          );
        }
        await expectOpenRathError(
          () => journal.resolveEffect(e.effect.id, { kind: "retry", actor: "ana" }, "another-tenant"),
          "effect_not_found",
          "resolving another tenant's effect",
        );
        expect(await journal.getEffect(e.effect.id)).toMatchObject({
          status: "needs_review",
          resolution: null,
        });
        expect((await store.getRun(claim.run.id))?.status).toBe("needs_review");
        await journal.resolveEffect(e.effect.id, { kind: "failed", reason: "bounced", actor: "ana" });
        await expectOpenRathError(
          () => journal.resolveEffect(e.effect.id, { kind: "retry", actor: "ana" }),
          "effect_not_under_review",
          "resolving twice",
        );
        expect(before?.status).toBe("dispatched");
      },
    );

    group.test("a stale fence cannot begin, dispatch, complete or review an effect", async () => {
      const store = group.track(await context.create());
      const { claim, journal } = await claimedRun(store, { leaseMs: 150 });
      const e = await journal.beginEffect(claim.fence, effectInput({ effect: "read_only" }));
      const fresh = await takeOver(store, claim);
      await expectOpenRathError(
        () => journal.beginEffect(claim.fence, effectInput()),
        "stale_fence",
        "beginEffect",
      );
      await expectOpenRathError(
        () => journal.dispatchEffect(claim.fence, e.effect.id),
        "stale_fence",
        "dispatchEffect",
      );
      await expectOpenRathError(
        () => journal.completeEffect(claim.fence, e.effect.id, ok, [entryAt("t/s")]),
        "stale_fence",
        "completeEffect",
      );
      await expectOpenRathError(
        () => journal.reviewEffect(claim.fence, e.effect.id),
        "stale_fence",
        "reviewEffect",
      );
      const page = await journal.listEffects({
        tenantId: claim.run.tenantId,
        status: ["dispatched", "needs_review", "succeeded", "failed", "prepared"],
      });
      expect(page.items.map((x) => x.id)).toEqual([e.effect.id]);
      expect((await store.getRun(claim.run.id))?.fencingToken).toBe(fresh.fence.token);
    });

    group.test("the review inbox is paged with a cursor, per tenant", async () => {
      const store = group.track(await context.create());
      const { claim, journal } = await claimedRun(store);
      const ids: string[] = [];
      for (let i = 0; i < 5; i++) ids.push((await journal.beginEffect(claim.fence, effectInput())).effect.id);
      const seen: string[] = [];
      let cursor: string | undefined;
      for (let page = 0; page < 5; page++) {
        const got = await journal.listEffects({
          tenantId: claim.run.tenantId,
          status: "dispatched",
          limit: 2,
          ...(cursor ? { cursor } : {}),
        });
        seen.push(...got.items.map((e) => e.id));
        if (!got.nextCursor) break;
        cursor = got.nextCursor;
      }
      expect(seen).toEqual(ids);
      expect((await journal.listEffects({ tenantId: "another-tenant", status: "dispatched" })).items).toEqual(
        [],
      );
      await expectOpenRathError(
        () => journal.listEffects({ tenantId: claim.run.tenantId, cursor: "not-a-cursor" }),
        "invalid_argument",
        "listEffects with a forged cursor",
      );
      await expectOpenRathError(
        () => journal.listEffects({ tenantId: claim.run.tenantId, limit: 0 }),
        "invalid_argument",
        "listEffects with limit 0",
      );
    });
  });
}
