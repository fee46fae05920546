import { describe, expect, it } from "vitest";
import { createSuiteContext } from "./suite-context.js";

const capabilities = { vectorSearch: false, persistence: false, sharedWriters: false };
const create = () => Promise.reject(new Error("unused"));

describe("createSuiteContext (memory)", () => {
  it("answers skip reasons by exact key and remembers every title asked about", () => {
    const context = createSuiteContext({
      create,
      capabilities,
      skip: { unicode: "no CJK", "commit > a session that grew commits only its new turns": "append-only" },
    });
    expect(context.skipped("unicode")).toBe("no CJK");
    expect(context.skipped("commit > a session that grew commits only its new turns")).toBe("append-only");
    expect(context.skipped("a session that grew commits only its new turns")).toBeUndefined();
    expect(context.skipped("hasOwnProperty")).toBeUndefined();
    expect([...context.asked]).toEqual([
      "unicode",
      "commit > a session that grew commits only its new turns",
      "a session that grew commits only its new turns",
      "hasOwnProperty",
    ]);
  });

  it("passes reopen and paraphrase through and defaults the per-test timeout to 30 s", () => {
    const bare = createSuiteContext({ create, capabilities });
    expect(bare.reopen).toBeUndefined();
    expect(bare.paraphrase).toBeUndefined();
    expect(bare.timeoutMs).toBe(30_000);
    const paraphrase = { text: "My car needs new brakes.", query: "automobile" };
    const full = createSuiteContext({ create, reopen: create, capabilities, paraphrase, timeoutMs: 5 });
    expect(full.reopen).toBe(create);
    expect(full.paraphrase).toBe(paraphrase);
    expect(full.timeoutMs).toBe(5);
  });
});
