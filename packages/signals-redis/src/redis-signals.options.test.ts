import { OpenRathError } from "@openrath/core";
import { describe, expect, it } from "vitest";
import { type RedisSignalsOptions, redisSignals } from "./redis-signals.js";

function refusal(options: unknown): OpenRathError {
  try {
    redisSignals(options as RedisSignalsOptions).close();
  } catch (error) {
    expect(OpenRathError.isInstance(error, "invalid_argument"), String(error)).toBe(true);
    return error as OpenRathError;
  }
  throw new Error("expected invalid_argument");
}

describe("redisSignals options, checked before anything connects", () => {
  it("names every bad option with its value and what is valid", () => {
    const error = refusal({ prefix: "has space", publishTimeoutMs: 0 });
    expect(error.message.split("\n")).toEqual([
      "Invalid options of redisSignals(), 2 problems:",
      '  - "prefix" is "has space"; it must be 1 to 64 letters, digits, "_", ".", ":" or "-", starting with a letter or digit.',
      '  - "publishTimeoutMs" is 0; it must be a positive number of milliseconds.',
    ]);
  });

  it("refuses an unknown option, listing the known ones", () => {
    expect(refusal({ uri: "redis://127.0.0.1:6379" }).message).toContain(
      '"uri" is "redis://127.0.0.1:6379"; it is not an option of redisSignals(); the fields are url, redis, prefix, fallback,',
    );
  });

  it("says what is wrong with a url without its password, and never shows the redis options", () => {
    const error = refusal({ url: "redis://u:hunter22@127.0.0.1:99999", redis: "password=hunter22" });
    const text = `${error.message}${JSON.stringify(error.details)}`;
    expect(text).not.toContain("hunter22");
    expect(error.message).toContain('the Redis URL "redis://u:***@127.0.0.1:99999" is not valid: port 99999');
    expect(error.details.issues).toEqual([
      { path: "url", message: expect.stringContaining("u:***@") },
      { path: "redis", message: "it must be an object of ioredis options" },
    ]);
  });
});
