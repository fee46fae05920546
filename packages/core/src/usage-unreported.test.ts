import { describe, expect, it } from "vitest";
import { Session } from "./session.js";
import { formatUsageTable, usageReport } from "./usage.js";

const usage = { promptTokens: 10, completionTokens: 5, totalTokens: 15 };

describe("model calls without reported usage", () => {
  const session = Session.fromUserMessage("Hi").append(
    { kind: "assistant", content: "Hello", usage, model: "m" },
    { kind: "user", content: "Again" },
    // A stream that carried no usage: the provider reports none, and neither does the chunk.
    { kind: "assistant", content: "Hello again", model: "m" },
  );

  it("are counted apart, not as zero-token calls, and named under the usage table", () => {
    const report = usageReport(session.chunks);
    expect(report.total).toEqual(usage);
    expect(report.byModel).toEqual([{ key: "m", usage, calls: 1 }]);
    expect(report.unreportedCalls).toBe(1);
    expect(formatUsageTable(report)).toContain("reported no usage (not counted above): 1");
  });

  it("count once in a session that holds the chunk twice", () => {
    const doubled = session.merge(session.fork(), { strategy: "concat" });
    expect(usageReport(doubled.chunks).unreportedCalls).toBe(1);
  });

  it("leave the report as it was when every call reported usage", () => {
    expect(usageReport(session.chunks.slice(0, 2))).not.toHaveProperty("unreportedCalls");
  });
});
