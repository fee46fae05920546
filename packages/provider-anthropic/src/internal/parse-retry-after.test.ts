import { describe, expect, it } from "vitest";
import { parseRetryAfter } from "./parse-retry-after.js";

const headers = (values: Record<string, string>) => new Headers(values);

describe("parseRetryAfter", () => {
  it("reads retry-after-ms first, then retry-after seconds, then an HTTP date", () => {
    expect(parseRetryAfter(headers({ "retry-after-ms": "250", "retry-after": "3" }))).toBe(250);
    expect(parseRetryAfter(headers({ "retry-after": "3" }))).toBe(3000);
    expect(parseRetryAfter(headers({ "retry-after": "0.05" }))).toBe(50);
    const now = Date.parse("2026-01-01T00:00:00Z");
    expect(parseRetryAfter(headers({ "retry-after": "Thu, 01 Jan 2026 00:00:02 GMT" }), now)).toBe(2000);
    expect(parseRetryAfter(headers({ "retry-after": "Wed, 31 Dec 2025 23:59:00 GMT" }), now)).toBe(0);
  });

  it("is undefined when the headers are absent or unreadable", () => {
    expect(parseRetryAfter(undefined)).toBeUndefined();
    expect(parseRetryAfter(headers({}))).toBeUndefined();
    expect(parseRetryAfter(headers({ "retry-after": "soon" }))).toBeUndefined();
    expect(parseRetryAfter(headers({ "retry-after": "-1" }))).toBeUndefined();
    expect(parseRetryAfter(headers({ "retry-after-ms": "x", "retry-after": "1" }))).toBe(1000);
  });
});
