import { describe, expect, it } from "vitest";
import { Batcher } from "./batcher.js";

/** A send whose batches resolve when the test says so; item `bad` fails alone, `boom` fails the statement. */
function sends() {
  const sent: { items: readonly string[]; done: () => void; fail: (e: Error) => void }[] = [];
  const send = (items: readonly string[]) =>
    new Promise<(string | Error)[]>((resolve, reject) => {
      sent.push({
        items,
        done: () => resolve(items.map((i) => (i === "bad" ? new Error(`refused ${i}`) : `ok ${i}`))),
        fail: reject,
      });
    }).then((outcomes) => {
      if (items.length > 1 && items.includes("boom")) throw new Error("statement failed");
      if (items.length === 1 && items[0] === "boom") throw new Error("boom alone");
      return outcomes;
    });
  return { sent, send };
}

const tick = () => new Promise((r) => setTimeout(r, 0));

describe("Batcher", () => {
  it("sends a call alone at once, and the calls made while it is in flight together next", async () => {
    const { sent, send } = sends();
    const batcher = new Batcher(send, 3);
    const first = batcher.call("a");
    await tick();
    expect(sent.map((s) => s.items)).toEqual([["a"]]);
    const later = ["b", "c", "d", "e"].map((i) => batcher.call(i));
    await tick();
    expect(sent).toHaveLength(1);
    sent[0]!.done();
    await expect(first).resolves.toBe("ok a");
    await tick();
    // At most `max` per batch, in call order.
    expect(sent.slice(1).map((s) => s.items)).toEqual([["b", "c", "d"]]);
    sent[1]!.done();
    await tick();
    expect(sent.slice(2).map((s) => s.items)).toEqual([["e"]]);
    sent[2]!.done();
    expect(await Promise.all(later)).toEqual(["ok b", "ok c", "ok d", "ok e"]);
  });

  it("calls made in the same turn share the first batch", async () => {
    const { sent, send } = sends();
    const batcher = new Batcher(send, 8);
    const calls = ["a", "b"].map((i) => batcher.call(i));
    await tick();
    expect(sent.map((s) => s.items)).toEqual([["a", "b"]]);
    sent[0]!.done();
    expect(await Promise.all(calls)).toEqual(["ok a", "ok b"]);
  });

  it("an item's own error reaches only its caller; a failed statement is retried item by item", async () => {
    const { sent, send } = sends();
    const batcher = new Batcher(send, 8);
    const calls = ["a", "bad", "boom", "c"].map((i) => batcher.call(i).catch((e: Error) => e.message));
    await tick();
    sent[0]!.done();
    await tick();
    await tick();
    // The statement failed: each item went again alone.
    expect(sent.slice(1).map((s) => s.items)).toEqual([["a"], ["bad"], ["boom"], ["c"]]);
    for (const s of sent.slice(1)) s.done();
    expect(await Promise.all(calls)).toEqual(["ok a", "refused bad", "boom alone", "ok c"]);
  });

  it("keeps `parallel` batches in flight", async () => {
    const { sent, send } = sends();
    const batcher = new Batcher(send, 8, 2);
    const a = batcher.call("a");
    await tick();
    const b = batcher.call("b");
    await tick();
    const c = batcher.call("c");
    await tick();
    expect(sent.map((s) => s.items)).toEqual([["a"], ["b"]]);
    sent[1]!.done();
    await expect(b).resolves.toBe("ok b");
    await tick();
    expect(sent.map((s) => s.items)).toEqual([["a"], ["b"], ["c"]]);
    sent[0]!.done();
    sent[2]!.done();
    expect(await Promise.all([a, c])).toEqual(["ok a", "ok c"]);
  });
});
