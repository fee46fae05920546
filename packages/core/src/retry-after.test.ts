import { describe, expect, it } from "vitest";
import { parseRetryAfter } from "./retry-after.js";

const now = Date.parse("2026-01-01T00:00:00Z");
const read = (headers: Record<string, string>) => parseRetryAfter(new Headers(headers), now);

describe("parseRetryAfter", () => {
  it("reads retry-after-ms as milliseconds, fractions included", () => {
    expect(read({ "retry-after-ms": "120" })).toBe(120);
    expect(read({ "retry-after-ms": "12.5" })).toBe(12.5);
  });

  it("reads retry-after as seconds, fractions included", () => {
    expect(read({ "retry-after": "3" })).toBe(3000);
    expect(read({ "retry-after": "0.05" })).toBe(50);
    expect(read({ "retry-after": " 2 " })).toBe(2000);
  });

  it("reads retry-after as an HTTP date, and a past date as 0", () => {
    expect(read({ "retry-after": "Thu, 01 Jan 2026 00:00:07 GMT" })).toBe(7000);
    expect(read({ "retry-after": "Wed, 31 Dec 2025 23:59:00 GMT" })).toBe(0);
  });

  it("prefers retry-after-ms and falls back to retry-after when it is unusable", () => {
    expect(read({ "retry-after-ms": "40", "retry-after": "9" })).toBe(40);
    expect(read({ "retry-after-ms": "soon", "retry-after": "2" })).toBe(2000);
    expect(read({ "retry-after-ms": "-3", "retry-after": "1" })).toBe(1000);
  });

  it("gives undefined without a usable header", () => {
    expect(parseRetryAfter(undefined)).toBeUndefined();
    expect(read({})).toBeUndefined();
    expect(read({ "retry-after": "later" })).toBeUndefined();
    expect(read({ "retry-after": "-5" })).toBeUndefined();
    expect(read({ "retry-after": "" })).toBeUndefined();
  });

  it("takes any object with a get, such as an SDK error's headers", () => {
    const headers = { get: (name: string) => (name === "retry-after" ? "4" : undefined) };
    expect(parseRetryAfter(headers, now)).toBe(4000);
  });
});
