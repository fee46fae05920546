import { describe, expect, it } from "vitest";
import { HeardRuns } from "./heard-runs.js";
import { inProcessSignals } from "./in-process-signals.js";

/** A `performance.now()` time strictly after every earlier reading. */
function later(): number {
  const start = performance.now();
  let now = start;
  while (now <= start) now = performance.now();
  return now;
}

const event = (runId: string, seq: number, status?: "running" | "succeeded" | "waiting" | "queued") => ({
  kind: "event" as const,
  runId,
  seq,
  ...(status ? { status } : {}),
});

describe("HeardRuns", () => {
  it("knows the runs it heard end or park, and nothing of the others", () => {
    const since = performance.now();
    const heard = new HeardRuns(true);
    heard.note(event("a", 2, "running"));
    heard.note(event("b", 3, "succeeded"));
    heard.note(event("c", 3, "waiting"));
    heard.note(event("c", 4, "queued"));
    heard.note(event("d", 5));
    expect(heard.heard("a", since - 1)).toBeUndefined(); // it was not listening yet then
    expect(heard.heard("a", performance.now())).toBeNull();
    const now = performance.now();
    expect(heard.heard("b", now)).toBe("succeeded");
    // A parked run's later status is kept, so a waiter for a parked run is not misled.
    expect(heard.heard("c", now)).toBe("queued");
    expect(heard.heard("d", now)).toBeNull();
  });

  it("is unsure of anything before a gap, and before it listened at all", () => {
    const heard = new HeardRuns(false);
    const before = performance.now();
    expect(heard.heard("a", before)).toBeUndefined();
    heard.lost();
    const after = later();
    expect(heard.heard("a", before)).toBeUndefined();
    expect(heard.heard("a", after)).toBeNull();
    later();
    heard.lost();
    expect(heard.heard("a", after)).toBeUndefined();
  });

  it("forgetting a run that ended is a gap: a waiter since then cannot trust a miss", () => {
    const heard = new HeardRuns(true);
    const since = later();
    for (let i = 0; i < 9000; i++) heard.note(event(`run-${i}`, 3, "succeeded"));
    expect(heard.heard("run-8999", since)).toBeUndefined();
    expect(heard.heard("never-heard", since)).toBeUndefined();
  });

  it("in-process signals note what they deliver", async () => {
    const signals = inProcessSignals();
    const since = later();
    await signals.publish(event("r", 3, "succeeded"));
    expect(signals.heardRuns.heard("r", since)).toBe("succeeded");
    expect(signals.heardRuns.heard("other", since)).toBeNull();
  });
});
