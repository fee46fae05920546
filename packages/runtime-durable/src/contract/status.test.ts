import { describe, expect, it } from "vitest";
import {
  assertTransition,
  canTransition,
  isTerminal,
  RUN_STATUSES,
  sourcesOf,
  TERMINAL_STATUSES,
  TRANSITIONS,
} from "./status.js";

describe("the transition table", () => {
  it("terminal statuses have no way out; every other status can end", () => {
    for (const status of RUN_STATUSES) {
      if (isTerminal(status)) expect(TRANSITIONS[status]).toEqual([]);
      else expect(TRANSITIONS[status].some((to) => TERMINAL_STATUSES.includes(to))).toBe(true);
    }
  });

  it("matches the reference transitions and nothing more", () => {
    expect(canTransition("queued", "running")).toBe(true);
    expect(canTransition("running", "queued")).toBe(true);
    expect(canTransition("waiting", "queued")).toBe(true);
    expect(canTransition("needs_review", "queued")).toBe(true);
    expect(canTransition("queued", "succeeded")).toBe(false);
    expect(canTransition("waiting", "running")).toBe(false);
    expect(canTransition("needs_review", "timed_out")).toBe(false);
    expect(sourcesOf("cancelled")).toEqual(["queued", "running", "waiting", "needs_review"]);
  });

  it("assertTransition names the statuses and the allowed targets", () => {
    expect(() => assertTransition("succeeded", "queued", "r1")).toThrowError(
      /Run r1 cannot go from "succeeded" to "queued"; "succeeded" is terminal/,
    );
    expect(() => assertTransition("waiting", "running")).toThrowError(
      expect.objectContaining({
        code: "invalid_transition",
        details: expect.objectContaining({ allowed: TRANSITIONS.waiting }),
      }),
    );
    expect(() => assertTransition("queued", "running")).not.toThrow();
  });
});
