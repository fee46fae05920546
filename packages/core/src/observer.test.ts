import {
  Agent,
  type BranchEvent,
  defineTool,
  lineageToText,
  type ObservedSpan,
  type ObservedWork,
  type RunObserver,
  type RunOptions,
  ScriptedProvider,
  Selector,
  Session,
  setBranchListener,
  Workflow,
} from "@openrath/core";
import { afterEach, describe, expect, it } from "vitest";

interface Seen {
  readonly kind: string;
  readonly depth: number;
  readonly facts: Record<string, string | number | boolean>;
  result?: unknown;
  error?: unknown;
}

/** An observer that records each piece of work, its nesting depth, its notes and its result. */
function recorder(): { observer: RunObserver; seen: Seen[] } {
  const seen: Seen[] = [];
  let depth = 0;
  let n = 0;
  const observer: RunObserver = {
    async observe<T>(work: ObservedWork, run: (span: ObservedSpan) => Promise<T>): Promise<T> {
      const entry: Seen = { kind: work.kind, depth, facts: {} };
      seen.push(entry);
      const id = (++n).toString(16).padStart(16, "0");
      const span: ObservedSpan = {
        link: { traceId: "a".repeat(32), spanId: id },
        note: (facts) => Object.assign(entry.facts, facts),
      };
      depth++;
      try {
        entry.result = await run(span);
        return entry.result as T;
      } catch (error) {
        entry.error = error;
        throw error;
      } finally {
        depth--;
      }
    },
  };
  return { observer, seen };
}

const echo = defineTool({
  name: "echo",
  description: "Echoes its text.",
  parameters: { type: "object", properties: { text: { type: "string" } } },
  execute: (args: { text?: string }) => args.text ?? "",
});

describe("RunOptions.observer", () => {
  afterEach(() => {
    setBranchListener(undefined);
  });

  it("sees the agent loop around its model and tool calls, and the loop node carries its trace link", async () => {
    const { observer, seen } = recorder();
    const provider = new ScriptedProvider([
      { toolCalls: [{ name: "echo", arguments: { text: "hi" } }] },
      { text: "done" },
    ]);
    const agent = new Agent({ name: "a", provider, tools: [echo] });
    const out = await agent.run(Session.fromUserMessage("go"), { observer });
    expect(seen.map((s) => [s.kind, s.depth])).toEqual([
      ["agent", 0],
      ["model", 1],
      ["tool", 1],
      ["model", 1],
    ]);
    expect(seen[0]!.result).toBe(out);
    expect((seen[1]!.result as { finishReason: string }).finishReason).toBe("tool_calls");
    expect(seen[2]!.result).toEqual({ content: '"hi"', isError: false });
    expect(out.lineage.op).toBe("loop");
    expect(out.lineage.trace).toEqual({ traceId: "a".repeat(32), spanId: "1".padStart(16, "0") });
    expect(lineageToText(out, { traces: true })).toContain(
      `tokens) trace ${"a".repeat(32)}/${"1".padStart(16, "0")}`,
    );
    expect(lineageToText(out)).not.toContain("trace");
  });

  it("hands the model and tool hooks the observed span, so a hook answering from a record can mark it", async () => {
    const { observer, seen } = recorder();
    // An empty script fails any call that reaches it: the hook must answer without the provider.
    const agent = new Agent({ name: "a", provider: new ScriptedProvider([]) });
    const run: RunOptions = {
      observer,
      calls: {
        async model(call) {
          call.observed?.note({ replayed: "journal" });
          return { content: "recorded", toolCalls: [], finishReason: "stop", model: "m" };
        },
      },
    };
    const out = await agent.run(Session.fromUserMessage("go"), run);
    expect(out.at(-1)).toMatchObject({ kind: "assistant", content: "recorded" });
    expect(seen.find((s) => s.kind === "model")!.facts).toEqual({ replayed: "journal" });
  });

  it("passes through workflows and selectors, and a failing model call is observed as thrown", async () => {
    const { observer, seen } = recorder();
    const writer = new Agent({ name: "writer", provider: new ScriptedProvider([{ text: "w" }]) });
    const router = new Selector({ name: "router", rule: () => 0 });
    class Flow extends Workflow {
      readonly writer = writer;
      async forward(session: Session, options: RunOptions) {
        return router.run(session, [this.writer], options);
      }
    }
    const out = await new Flow({ name: "flow" }).run(Session.fromUserMessage("go"), { observer });
    expect(seen.map((s) => [s.kind, s.depth])).toEqual([
      ["workflow", 0],
      ["select", 1],
      ["agent", 1],
      ["model", 2],
    ]);
    expect(out.lineage.trace?.spanId).toBe("1".padStart(16, "0"));
    const broken = new Agent({ name: "b", provider: new ScriptedProvider([]) });
    const failing = recorder();
    await expect(broken.run(Session.fromUserMessage("go"), { observer: failing.observer })).rejects.toThrow();
    expect(failing.seen.find((s) => s.kind === "model")!.error).toBeDefined();
  });

  it("tells the branch listener of every fork and merge", () => {
    const events: BranchEvent[] = [];
    setBranchListener((e) => events.push(e));
    const root = Session.fromUserMessage("go");
    const a = root.fork();
    const b = root.fork();
    const merged = a.merge(b);
    expect(events.map((e) => [e.op, e.session.id, e.from.map((s) => s.id)])).toEqual([
      ["fork", a.id, [root.id]],
      ["fork", b.id, [root.id]],
      ["merge", merged.id, [a.id, b.id]],
    ]);
    setBranchListener(() => {
      throw new Error("observer bug");
    });
    expect(() => root.fork()).not.toThrow();
  });
});
