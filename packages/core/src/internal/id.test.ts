import { describe, expect, it } from "vitest";
import { newId } from "./id.js";

const UUID_V7 = /^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

/** The 48-bit Unix millisecond timestamp at the front of a UUID v7. */
const timestampOf = (id: string) => Number.parseInt(id.replace(/-/g, "").slice(0, 12), 16);

describe("newId", () => {
  it("makes RFC 9562 version 7 UUIDs: lower-case hex, version nibble 7, variant bits 10", () => {
    for (let i = 0; i < 1000; i++) {
      const id = newId();
      expect(id).toMatch(UUID_V7);
      const variant = Number.parseInt(id[19]!, 16);
      expect(variant >> 2).toBe(0b10);
      expect(id[14]).toBe("7");
    }
  });

  it("encodes the current time, or the given millisecond timestamp, in the first 48 bits", () => {
    const before = Date.now();
    const id = newId();
    const after = Date.now();
    expect(timestampOf(id)).toBeGreaterThanOrEqual(before);
    // Sequence overflow in earlier tests can borrow a few milliseconds, never seconds.
    expect(timestampOf(id)).toBeLessThan(after + 1000);
    const later = after + 10_000_000;
    expect(timestampOf(newId(later))).toBe(later);
  });

  it("makes 10,000 ids in a tight loop that are unique and strictly increasing in creation order", () => {
    const ids: string[] = [];
    for (let i = 0; i < 10_000; i++) ids.push(newId());
    expect(new Set(ids).size).toBe(ids.length);
    for (let i = 1; i < ids.length; i++) {
      if (!(ids[i - 1]! < ids[i]!)) expect.fail(`id ${i} (${ids[i]}) does not sort after ${ids[i - 1]}`);
    }
    const sorted = [...ids].sort();
    expect(sorted).toEqual(ids);
  });

  it("keeps order when the clock is given a time earlier than the last id", () => {
    const t = Date.now() + 20_000_000;
    const first = newId(t);
    const second = newId(t - 5000);
    expect(second > first).toBe(true);
  });

  it("keeps order past 4096 ids in one millisecond by borrowing the next millisecond", () => {
    const t = Date.now() + 30_000_000;
    const ids: string[] = [];
    for (let i = 0; i < 5000; i++) ids.push(newId(t));
    for (let i = 1; i < ids.length; i++) {
      if (!(ids[i - 1]! < ids[i]!)) expect.fail(`id ${i} does not sort after id ${i - 1}`);
    }
    expect(timestampOf(ids[0]!)).toBe(t);
    expect(timestampOf(ids[4999]!)).toBe(t + 1);
  });
});
