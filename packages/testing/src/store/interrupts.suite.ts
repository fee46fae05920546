import type { RunStoreV1 } from "@openrath/runtime-durable/store";
import { expect } from "vitest";
import { describeGroup } from "../internal/describe-group.js";
import { expectOpenRathError } from "../internal/expect-error.js";
import { sleep } from "./fixtures.js";
import { claimedRun, effectInput, interruptInput, takeOver } from "./journal-fixtures.js";
import type { StoreSuiteContext } from "./suite-context.js";

/** Interrupts: durable waiting, decisions once with checked payloads, timeouts, the paged inbox, fencing. */
export function interruptsSuite(context: StoreSuiteContext): void {
  describeGroup<RunStoreV1>(context, "interrupts", "store", (group) => {
    group.test(
      "raising an interrupt parks the run waiting and releases the lease; the request is stored as asked",
      async () => {
        const store = group.track(await context.create());
        const { claim, journal } = await claimedRun(store);
        const input = interruptInput();
        const { interrupt, run } = await journal.raiseInterrupt(claim.fence, input);
        expect(run).toMatchObject({ status: "waiting", leaseHolder: null, leaseExpiresAt: null });
        expect(interrupt).toMatchObject({
          runId: claim.run.id,
          tenantId: claim.run.tenantId,
          stepId: "first",
          kind: "approval",
          request: input.request,
          schema: input.schema,
          status: "pending",
          decision: null,
          expiresAt: null,
          hasTimeoutDefault: false,
        });
        // What the operator sees carries no bookkeeping of the runtime.
        expect(Object.keys(interrupt).sort()).toEqual(
          [
            "createdAt",
            "decidedAt",
            "decision",
            "expiresAt",
            "hasTimeoutDefault",
            "id",
            "kind",
            "request",
            "runId",
            "schema",
            "status",
            "stepId",
            "tenantId",
          ].sort(),
        );
        expect(await journal.getInterrupt(interrupt.id)).toEqual(interrupt);
        const journaled = await journal.stepInterrupts(claim.run.id, 0);
        expect(journaled).toMatchObject([
          { id: interrupt.id, position: "i/0", fingerprint: "fp-interrupt", checkpointSeq: 0 },
        ]);
        expect((await store.readEvents(claim.run.id)).at(-1)).toMatchObject({
          type: "run.interrupt.created",
          data: { from: "running", to: "waiting", interruptId: interrupt.id, kind: "approval" },
        });
        await expectOpenRathError(
          () => store.appendEvent(claim.fence, { type: "step.note" }),
          "stale_fence",
          "a write of the worker after it parked",
        );
      },
    );

    group.test(
      "a decision resumes the run once; a second decision is interrupt_decided and changes nothing",
      async () => {
        const store = group.track(await context.create());
        const { claim, journal } = await claimedRun(store);
        const { interrupt } = await journal.raiseInterrupt(claim.fence, interruptInput());
        const { interrupt: decided, run } = await journal.decideInterrupt(interrupt.id, {
          kind: "edit",
          actor: "ana",
          reason: "lower amount",
          payload: { amount: 90 },
        });
        expect(run.status).toBe("queued");
        expect(decided).toMatchObject({
          status: "decided",
          decision: {
            kind: "edit",
            actor: "ana",
            reason: "lower amount",
            payload: { amount: 90 },
            by: "operator",
          },
        });
        expect(decided.decidedAt).toBeGreaterThan(0);
        expect((await store.readEvents(claim.run.id)).at(-1)).toMatchObject({
          type: "run.interrupt.decided",
          data: { from: "waiting", to: "queued", interruptId: interrupt.id, decision: "edit", actor: "ana" },
        });
        const before = await store.getRun(claim.run.id);
        await expectOpenRathError(
          () => journal.decideInterrupt(interrupt.id, { kind: "reject", actor: "bob" }),
          "interrupt_decided",
          "deciding twice",
        );
        expect(await store.getRun(claim.run.id)).toEqual(before);
        expect((await journal.getInterrupt(interrupt.id))?.decision?.actor).toBe("ana");
      },
    );

    group.test("a bad decision is invalid_decision and changes nothing", async () => {
      const store = group.track(await context.create());
      const { claim, journal } = await claimedRun(store);
      const { interrupt } = await journal.raiseInterrupt(claim.fence, interruptInput());
      for (const [what, bad] of [
        ["a payload its schema refuses", { kind: "edit", actor: "ana", payload: { amount: 5000 } }],
        ["a payload missing a required field", { kind: "respond", actor: "ana", payload: {} }],
        ["an edit without a payload", { kind: "edit", actor: "ana" }],
        ["no actor", { kind: "approve", actor: " " }],
        ["an unknown kind", { kind: "maybe", actor: "ana" }],
      ] as const) {
        await expectOpenRathError(
          () => journal.decideInterrupt(interrupt.id, bad as never),
          "invalid_decision",
          what,
        );
      }
      expect(await journal.getInterrupt(interrupt.id)).toMatchObject({ status: "pending", decision: null });
      expect((await store.getRun(claim.run.id))?.status).toBe("waiting");
      await expectOpenRathError(
        () =>
          journal.decideInterrupt("00000000-0000-7000-8000-000000000000", { kind: "approve", actor: "ana" }),
        "interrupt_not_found",
        "deciding an unknown interrupt",
      );
      await expectOpenRathError(
        () => journal.decideInterrupt(interrupt.id, { kind: "approve", actor: "ana" }, "another-tenant"),
        "interrupt_not_found",
        "deciding another tenant's interrupt",
      );
    });

    group.test(
      "deciding for a run that is no longer waiting is invalid_transition and changes nothing",
      async () => {
        const store = group.track(await context.create());
        const { claim, journal } = await claimedRun(store);
        const { interrupt } = await journal.raiseInterrupt(claim.fence, interruptInput());
        await store.cancel(claim.run.id, { reason: "no longer needed" });
        await expectOpenRathError(
          () => journal.decideInterrupt(interrupt.id, { kind: "approve", actor: "ana" }),
          "invalid_transition",
          "deciding for a cancelled run",
        );
        expect(await journal.getInterrupt(interrupt.id)).toMatchObject({ status: "pending" });
        expect((await store.getRun(claim.run.id))?.status).toBe("cancelled");
      },
    );

    group.test("a timeout takes the declared default, or without one ends the run timed_out", async () => {
      const store = group.track(await context.create());
      const withDefault = await claimedRun(store);
      const a = await withDefault.journal.raiseInterrupt(
        withDefault.claim.fence,
        interruptInput({ timeoutMs: 100, onTimeout: { kind: "reject", reason: "nobody answered" } }),
      );
      expect(a.interrupt.hasTimeoutDefault).toBe(true);
      expect(a.interrupt.expiresAt! - a.interrupt.createdAt).toBeGreaterThanOrEqual(99);
      const without = await claimedRun(store);
      const b = await without.journal.raiseInterrupt(without.claim.fence, interruptInput({ timeoutMs: 100 }));
      await sleep(300);
      await store.sweep();
      expect(await withDefault.journal.getInterrupt(a.interrupt.id)).toMatchObject({
        status: "decided",
        decision: { kind: "reject", reason: "nobody answered", actor: "openrath-system", by: "timeout" },
      });
      expect((await store.getRun(withDefault.run.id))?.status).toBe("queued");
      expect(await without.journal.getInterrupt(b.interrupt.id)).toMatchObject({
        status: "expired",
        decision: null,
      });
      expect(await store.getRun(without.run.id)).toMatchObject({
        status: "timed_out",
        error: { code: "interrupt_timeout" },
      });
      expect((await store.readEvents(without.run.id)).at(-1)).toMatchObject({
        type: "run.interrupt.expired",
        data: { from: "waiting", to: "timed_out", interruptId: b.interrupt.id },
      });
      await expectOpenRathError(
        () => without.journal.decideInterrupt(b.interrupt.id, { kind: "approve", actor: "ana" }),
        "interrupt_decided",
        "deciding an expired interrupt",
      );
    });

    group.test("the pending inbox is paged with a cursor that reaches every page, per tenant", async () => {
      const store = group.track(await context.create());
      const ids: string[] = [];
      let tenantId = "";
      for (let i = 0; i < 5; i++) {
        const { claim, journal } = await claimedRun(store);
        tenantId = claim.run.tenantId;
        ids.push(
          (await journal.raiseInterrupt(claim.fence, interruptInput({ request: { n: i } }))).interrupt.id,
        );
      }
      const journal = store.journal!;
      await journal.decideInterrupt(ids[1]!, { kind: "approve", actor: "ana" });
      const seen: string[] = [];
      let cursor: string | undefined;
      for (let page = 0; page < 5; page++) {
        const got = await journal.listInterrupts({ tenantId, limit: 2, ...(cursor ? { cursor } : {}) });
        expect(got.items.length).toBeLessThanOrEqual(2);
        seen.push(...got.items.map((i) => i.id));
        if (!got.nextCursor) break;
        cursor = got.nextCursor;
      }
      expect(seen).toEqual([ids[0], ids[2], ids[3], ids[4]]);
      const all = await journal.listInterrupts({ tenantId, status: "all", limit: 200 });
      expect(all.items.map((i) => i.id)).toEqual(ids);
      expect(all.nextCursor).toBeNull();
      expect((await journal.listInterrupts({ tenantId: "another-tenant" })).items).toEqual([]);
      await expectOpenRathError(
        () => journal.listInterrupts({ tenantId, cursor: Buffer.from("e:1").toString("base64url") }),
        "invalid_argument",
        "listInterrupts with an effect listing's cursor",
      );
    });

    group.test(
      "a stale fence cannot raise an interrupt; a tool's own effect goes back to prepared when it asks",
      async () => {
        const store = group.track(await context.create());
        const { claim, journal } = await claimedRun(store, { leaseMs: 150 });
        const fresh = await takeOver(store, claim);
        await expectOpenRathError(
          () => journal.raiseInterrupt(claim.fence, interruptInput()),
          "stale_fence",
          "raiseInterrupt",
        );
        expect(await journal.listInterrupts({ tenantId: claim.run.tenantId, status: "all" })).toEqual({
          items: [],
          nextCursor: null,
        });
        const effect = await journal.beginEffect(fresh.fence, effectInput());
        await journal.raiseInterrupt(
          fresh.fence,
          interruptInput({ position: "t/b/0/0/i/0", releaseEffectId: effect.effect.id }),
        );
        expect((await journal.getEffect(effect.effect.id))?.status).toBe("prepared");
      },
    );
  });
}
