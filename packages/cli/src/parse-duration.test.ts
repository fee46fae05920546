import { OpenRathError } from "@openrath/core";
import { describe, expect, it } from "vitest";
import { parseDuration } from "./parse-duration.js";

describe("parseDuration", () => {
  it.each([
    ["30m", 30 * 60_000],
    ["12h", 12 * 3_600_000],
    ["7d", 7 * 86_400_000],
    ["2w", 14 * 86_400_000],
    ["45s", 45_000],
    ["250ms", 250],
    ["1h30m", 90 * 60_000],
    ["1.5h", 90 * 60_000],
    [" 7D ", 7 * 86_400_000],
    ["0s", 0],
  ])("reads %j as %d ms", (text, ms) => {
    expect(parseDuration(text)).toBe(ms);
  });

  it.each(["", "7", "-1d", "7x", "d", "1h 30m", "7days", "1e3s"])(
    "rejects %j naming the valid forms",
    (text) => {
      let error: unknown;
      try {
        parseDuration(text);
      } catch (e) {
        error = e;
      }
      expect(OpenRathError.isInstance(error, "invalid_argument")).toBe(true);
      expect((error as Error).message).toContain(`invalid duration ${JSON.stringify(text)}`);
      expect((error as Error).message).toContain("30m, 12h, 7d or 1h30m");
    },
  );
});
