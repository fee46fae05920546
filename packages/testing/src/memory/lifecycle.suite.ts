import { Session } from "@openrath/core";
import { expect } from "vitest";
import { showHits } from "./internal/corpus.js";
import { defineGroup } from "./internal/define-group.js";
import { expectMemoryError } from "./internal/expect-memory-error.js";
import type { MemorySuiteContext } from "./suite-context.js";

/** Lifecycle: `create` gives an empty store, `close` is idempotent, and every method refuses a closed store. */
export function lifecycleSuite(context: MemorySuiteContext): void {
  defineGroup(context, "lifecycle", (group) => {
    group.test("create gives an empty store", async () => {
      const memory = await group.open();
      for (const scope of [undefined, { tenant: "default" }, { tenant: "acme", user: "ann" }]) {
        const hits = await memory.recall("note memory fact the a", { scope, topK: 50 });
        expect(hits, `recall at ${JSON.stringify(scope)} on a fresh store found ${showHits(hits)}`).toEqual(
          [],
        );
      }
    });

    group.test("close is idempotent", async () => {
      const memory = await group.open();
      await memory.remember({ text: "closing soon" });
      await memory.close();
      await memory.close();
      await Promise.all([memory.close(), memory.close()]);
    });

    group.test("close called concurrently on an open store resolves every call", async () => {
      const memory = await group.open();
      await memory.remember({ text: "closing together" });
      await Promise.all([memory.close(), memory.close(), memory.close()]);
    });

    group.test("every method rejects with memory_closed after close", async () => {
      const memory = await group.open();
      const [kept] = await memory.remember({ text: "kept before close" });
      await memory.close();
      const session = Session.fromUserMessage("commit after close").append({
        kind: "assistant",
        content: "refused",
      });
      const calls: [string, () => Promise<unknown>][] = [
        ['remember({ text: "x" })', () => memory.remember({ text: "x" })],
        ["remember([])", () => memory.remember([])],
        ['recall("kept")', () => memory.recall("kept")],
        ['recall("")', () => memory.recall("")],
        [
          'recall("kept", { scope: { tenant: "acme" }, topK: 1 })',
          () => memory.recall("kept", { scope: { tenant: "acme" }, topK: 1 }),
        ],
        ["commit(session)", () => memory.commit(session)],
        [
          'commit(session, { scope: { tenant: "acme" } })',
          () => memory.commit(session, { scope: { tenant: "acme" } }),
        ],
        ["forget({ ids: [kept.id] })", () => memory.forget({ ids: [kept!.id] })],
        ['forget({ scope: { tenant: "default" } })', () => memory.forget({ scope: { tenant: "default" } })],
      ];
      for (const [what, call] of calls)
        await expectMemoryError(call, "memory_closed", `after close, ${what}`);
    });
  });
}
