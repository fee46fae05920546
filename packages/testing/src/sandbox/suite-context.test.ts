import { describe, expect, it } from "vitest";
import { createSuiteContext } from "./suite-context.js";

const capabilities = {
  streaming: true,
  stdin: true,
  network: "none",
  isolation: "container",
  snapshots: false,
  languages: ["python"],
} as const;

describe("createSuiteContext", () => {
  it("answers skip reasons by exact key and remembers every title asked about", () => {
    const context = createSuiteContext({
      create: () => Promise.reject(new Error("unused")),
      capabilities,
      skip: { timeouts: "slow", "exec > stdin is piped from bytes": "no bytes" },
    });
    expect(context.skipped("timeouts")).toBe("slow");
    expect(context.skipped("exec > stdin is piped from bytes")).toBe("no bytes");
    expect(context.skipped("stdin is piped from bytes")).toBeUndefined();
    expect(context.skipped("toString")).toBeUndefined();
    expect([...context.asked]).toEqual([
      "timeouts",
      "exec > stdin is piped from bytes",
      "stdin is piped from bytes",
      "toString",
    ]);
  });

  it("defaults the per-test timeout to 30 s", () => {
    const context = createSuiteContext({ create: () => Promise.reject(new Error("unused")), capabilities });
    expect(context.timeoutMs).toBe(30_000);
    expect(createSuiteContext({ create: context.create, capabilities, timeoutMs: 5 }).timeoutMs).toBe(5);
  });
});
