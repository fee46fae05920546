import { describe, expect, it } from "vitest";
import { BoundedMap, backoffDelay } from "./backend-helpers.js";

describe("backoffDelay", () => {
  it("doubles from baseMs per attempt and stops at maxMs", () => {
    const waits = [1, 2, 3, 4, 5].map((attempt) => backoffDelay(attempt, { baseMs: 100, maxMs: 1000 }));
    expect(waits).toEqual([100, 200, 400, 800, 1000]);
  });

  it("treats attempts below 1 as the first and huge ones as the cap", () => {
    expect(backoffDelay(0, { baseMs: 50, maxMs: 2000 })).toBe(50);
    expect(backoffDelay(5000, { baseMs: 50, maxMs: 2000 })).toBe(2000);
    expect(backoffDelay(4, { baseMs: 250, maxMs: Infinity })).toBe(2000);
  });

  it("adds up to baseMs of jitter, still capped", () => {
    expect(backoffDelay(2, { baseMs: 100, maxMs: 1000, jitter: () => 0.5 })).toBe(250);
    expect(backoffDelay(4, { baseMs: 100, maxMs: 850, jitter: () => 0.9 })).toBe(850);
  });
});

describe("BoundedMap", () => {
  it("drops the oldest key when a new one comes in full", () => {
    const map = new BoundedMap<string, number>(2);
    map.set("a", 1).set("b", 2).set("c", 3);
    expect([...map.keys()]).toEqual(["b", "c"]);
  });

  it("keeps its size when a held key is set again", () => {
    const map = new BoundedMap<string, number>(2);
    map.set("a", 1).set("b", 2).set("a", 9);
    expect([...map.entries()]).toEqual([
      ["a", 9],
      ["b", 2],
    ]);
  });

  it("refuses a limit below 1", () => {
    expect(() => new BoundedMap(0)).toThrow(RangeError);
  });
});
