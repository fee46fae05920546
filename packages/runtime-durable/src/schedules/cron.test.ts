import { describe, expect, it } from "vitest";
import { DurableError } from "../contract/durable-error.js";
import { firstFireTime, nextFireTime } from "./cron.js";

const at = (iso: string) => Date.parse(iso);

describe("cron fire times", () => {
  it("gives the next time strictly after the given one, with seconds as a sixth field", () => {
    expect(nextFireTime("* * * * * *", "UTC", at("2026-01-01T00:00:00.000Z"))).toBe(
      at("2026-01-01T00:00:01.000Z"),
    );
    expect(nextFireTime("*/15 * * * *", "UTC", at("2026-01-01T00:07:30Z"))).toBe(at("2026-01-01T00:15:00Z"));
  });

  it("reads the expression in its IANA zone, across a daylight-saving change", () => {
    // 09:00 in Berlin is 08:00 UTC in winter and 07:00 UTC from 29 March 2026 (summer time).
    const first = nextFireTime("0 9 * * *", "Europe/Berlin", at("2026-03-28T12:00:00Z"));
    expect(first).toBe(at("2026-03-29T07:00:00Z"));
    expect(nextFireTime("0 9 * * *", "Europe/Berlin", at("2026-03-27T12:00:00Z"))).toBe(
      at("2026-03-28T08:00:00Z"),
    );
  });

  it("refuses an expression or zone that does not parse with invalid_cron", () => {
    for (const [cron, zone] of [
      ["not a cron", "UTC"],
      ["61 * * * *", "UTC"],
      ["* * * * * * * *", "UTC"],
      ["", "UTC"],
      ["* * * * *", "Mars/Olympus"],
    ] as const) {
      let caught: unknown;
      try {
        firstFireTime(cron, zone, Date.now());
      } catch (error) {
        caught = error;
      }
      expect(DurableError.isInstance(caught, "invalid_cron"), `${cron} in ${zone}`).toBe(true);
    }
  });
});
