import {
  Agent,
  Budget,
  BudgetExceededError,
  defineTool,
  PassThrough,
  type RunEvent,
  type RunOptions,
  ScriptedProvider,
  Session,
  Workflow,
} from "@openrath/core";
import { describe, expect, it } from "vitest";

const agent = (
  name: string,
  texts: string[] = ["ok"],
  extra: Partial<ConstructorParameters<typeof Agent>[0]> = {},
) => new Agent({ name, provider: new ScriptedProvider(texts.map((text) => ({ text }))), ...extra });

class Single extends Workflow {
  constructor(
    readonly worker: Agent,
    options: { name?: string; description?: string } = {},
  ) {
    super(options);
  }
  async forward(session: Session, options: RunOptions) {
    return this.worker.run(session, options);
  }
}

class Outer extends Workflow {
  constructor(
    readonly inner: Workflow,
    options: { name?: string } = {},
  ) {
    super(options);
  }
  async forward(session: Session, options: RunOptions) {
    return this.inner.run(session, options);
  }
}

class Identity extends Workflow {
  async forward(session: Session) {
    return session;
  }
}

async function collect(stream: AsyncIterable<RunEvent>): Promise<RunEvent[]> {
  const out: RunEvent[] = [];
  for await (const e of stream) out.push(e);
  return out;
}

describe("Workflow.run", () => {
  it("wraps forward's result in a workflow lineage node with the workflow path", async () => {
    const flow = new Single(agent("writer", ["draft"]), { name: "drafting", description: "Writes drafts" });
    const input = Session.fromUserMessage("Write");
    const out = await flow.run(input);
    expect(out.text()).toBe("draft");
    expect(out.lineage.op).toBe("workflow");
    expect(out.lineage.operator).toBe("drafting");
    expect(out.lineage.extras).toEqual({ "workflow.path": "drafting" });
    const loop = out.lineage.parents[0]!;
    expect(loop.op).toBe("loop");
    expect(loop.parents[0]!.id).toBe(input.id);
    expect(flow.description).toBe("Writes drafts");
  });

  it("names a workflow after its class by default", () => {
    expect(new Identity().name).toBe("Identity");
    expect(new Identity().description).toBe("");
    expect(new Identity({ name: "same" }).name).toBe("same");
  });

  it("returns the input itself when forward returns it unchanged", async () => {
    const input = Session.fromUserMessage("hi");
    expect(await new Identity().run(input)).toBe(input);
  });

  it("gives a new identity to an appended version of the input", async () => {
    class Appender extends Workflow {
      async forward(session: Session) {
        return session.append({ kind: "user", content: "more" });
      }
    }
    const input = Session.fromUserMessage("hi");
    const out = await new Appender().run(input);
    expect(out.id).not.toBe(input.id);
    expect(out.lineage.op).toBe("workflow");
    expect(out.lineage.parents[0]!.id).toBe(input.id);
    expect(out.length).toBe(2);
  });

  it("prefixes chunk authors and lineage paths with the workflow path of nested workflows", async () => {
    const flow = new Outer(new Single(agent("agent"), { name: "inner" }), { name: "outer" });
    const out = await flow.run(Session.fromUserMessage("hi"));
    expect(out.at(-1)!.author).toBe("outer/inner/agent");
    expect(out.lineage.extras).toEqual({ "workflow.path": "outer" });
    expect(out.lineage.parents[0]!.extras).toEqual({ "workflow.path": "outer/inner" });
    expect(out.lineage.parents[0]!.operator).toBe("inner");
  });

  it("starts from a caller's path", async () => {
    const out = await new Single(agent("a"), { name: "w" }).run(Session.fromUserMessage("hi"), {
      path: "root",
    });
    expect(out.at(-1)!.author).toBe("root/w/a");
    expect(out.lineage.extras).toEqual({ "workflow.path": "root/w" });
  });

  it("runs fork and merge inside forward, keeping the shared prefix once", async () => {
    class Review extends Workflow {
      writer = agent("writer", ["A draft."]);
      critic = new Agent({
        name: "critic",
        provider: new ScriptedProvider((request) => ({
          text: `Critique of ${request.messages.length} messages`,
        })),
      });
      async forward(session: Session, options: RunOptions) {
        const draft = await this.writer.run(session, options);
        const [a, b] = await Promise.all([
          this.critic.run(draft.fork(), options),
          this.critic.run(draft.fork(), options),
        ]);
        return a.merge(b);
      }
    }
    const out = await new Review().run(Session.fromUserMessage("Write a haiku"));
    expect(out.chunks.map((c) => [c.kind, c.author ?? null])).toEqual([
      ["user", null],
      ["assistant", "Review/writer"],
      ["assistant", "Review/critic"],
      ["assistant", "Review/critic"],
    ]);
    const merge = out.lineage.parents[0]!;
    expect(merge.op).toBe("merge");
    expect(merge.parents.map((p) => p.op)).toEqual(["loop", "loop"]);
  });

  it("passes budgets on to the agents it runs", async () => {
    const budget = new Budget({ maxTokens: 1 });
    const flow = new Single(
      new Agent({
        name: "a",
        provider: new ScriptedProvider([
          { text: "x", usage: { promptTokens: 5, completionTokens: 5 } },
          { text: "y" },
        ]),
      }),
    );
    await flow.run(Session.fromUserMessage("one"), { budget });
    await expect(flow.run(Session.fromUserMessage("two"), { budget })).rejects.toBeInstanceOf(
      BudgetExceededError,
    );
  });

  it("lets forward's errors through", async () => {
    class Broken extends Workflow {
      async forward(): Promise<Session> {
        throw new Error("broken forward");
      }
    }
    await expect(new Broken().run(Session.fromUserMessage("hi"))).rejects.toThrow("broken forward");
  });
});

describe("PassThrough", () => {
  it("returns its input unchanged, as itself", async () => {
    const pass = new PassThrough();
    const input = Session.fromUserMessage("hi");
    expect(await pass.run(input)).toBe(input);
    expect(pass.name).toBe("pass-through");
    expect(pass.description).toBe("Returns the session unchanged.");
  });
});

describe("Workflow tree", () => {
  const echo = defineTool({ name: "echo", description: "", parameters: {}, execute: () => 1 });
  const shared = agent("shared");
  const critic = agent("critic");

  class Inner extends Workflow {
    worker = agent("worker", ["w"], { tools: [echo] });
    again = shared;
    async forward(session: Session) {
      return session;
    }
  }

  class Tree extends Workflow {
    inner = new Inner({ name: "inner" });
    helpers = [shared, "not a child", agent("helper")];
    byRole = { critic, count: 3 };
    settings = { retries: 2 };
    lead = shared;
    async forward(session: Session) {
      return session;
    }
  }

  it("lists direct children by property name, inside arrays and plain objects too", () => {
    const tree = new Tree({ name: "tree" });
    expect(tree.children().map(([key, child]) => [key, child.name])).toEqual([
      ["byRole.critic", "critic"],
      ["helpers[0]", "shared"],
      ["helpers[2]", "helper"],
      ["inner", "inner"],
      ["lead", "shared"],
    ]);
  });

  it("lists itself and every descendant depth first, an agent reachable twice once", () => {
    const tree = new Tree({ name: "tree" });
    expect(tree.modules().map((m) => m.name)).toEqual([
      "tree",
      "critic",
      "shared",
      "helper",
      "inner",
      "worker",
    ]);
  });

  it("describes the tree like a module repr", () => {
    const tree = new Tree({ name: "tree" });
    expect(tree.describe()).toBe(
      [
        "Tree(name=tree",
        "  (byRole.critic): Agent(name=critic, provider=scripted:scripted)",
        "  (helpers[0]): Agent(name=shared, provider=scripted:scripted)",
        "  (helpers[2]): Agent(name=helper, provider=scripted:scripted)",
        "  (inner): Inner(name=inner",
        "    (again): Agent(name=shared, provider=scripted:scripted)",
        "    (worker): Agent(name=worker, provider=scripted:scripted, tools=[echo])",
        "  )",
        "  (lead): Agent(name=shared, provider=scripted:scripted)",
        ")",
      ].join("\n"),
    );
  });

  it("describes a workflow without children on one line", () => {
    expect(new Identity({ name: "id" }).describe()).toBe("Identity(name=id)");
  });

  it("describes a workflow reachable twice in full once", () => {
    const inner = new Single(agent("a"), { name: "inner" });
    class Twice extends Workflow {
      first = inner;
      second = inner;
      async forward(session: Session) {
        return session;
      }
    }
    expect(new Twice({ name: "twice" }).describe()).toBe(
      [
        "Twice(name=twice",
        "  (first): Single(name=inner",
        "    (worker): Agent(name=a, provider=scripted:scripted)",
        "  )",
        "  (second): Single(name=inner)",
        ")",
      ].join("\n"),
    );
    expect(new Twice().modules()).toHaveLength(3);
  });

  it("does not loop on a workflow that holds itself", () => {
    class Cyclic extends Workflow {
      me: Workflow = this;
      async forward(session: Session) {
        return session;
      }
    }
    const cyclic = new Cyclic();
    expect(cyclic.modules()).toEqual([cyclic]);
    expect(cyclic.describe()).toBe("Cyclic(name=Cyclic\n  (me): Cyclic(name=Cyclic)\n)");
  });
});

describe("Workflow.stream", () => {
  it("yields workflow_start and workflow_end around its agents' events, then the session", async () => {
    const flow = new Outer(new Single(agent("agent", ["done"]), { name: "inner" }), { name: "outer" });
    const shown = new Set(["workflow_start", "workflow_end", "turn_start", "assistant", "session"]);
    const events = (await collect(flow.stream(Session.fromUserMessage("hi")))).filter((e) =>
      shown.has(e.type),
    );
    expect(events.map((e) => e.type)).toEqual([
      "workflow_start",
      "workflow_start",
      "turn_start",
      "assistant",
      "workflow_end",
      "workflow_end",
      "session",
    ]);
    expect(events[0]).toEqual({ type: "workflow_start", workflow: "outer", path: "outer" });
    expect(events[1]).toEqual({ type: "workflow_start", workflow: "inner", path: "outer/inner" });
    const last = events.at(-1);
    if (last?.type !== "session") throw new Error("no session");
    expect(events[5]).toEqual({
      type: "workflow_end",
      workflow: "outer",
      path: "outer",
      sessionId: last.session.id,
    });
    expect(events[4]).toMatchObject({ workflow: "inner", sessionId: last.session.lineage.parents[0]!.id });
    const assistant = events[3];
    expect(assistant?.type === "assistant" && assistant.chunk.author).toBe("outer/inner/agent");
  });

  it("yields agents' text deltas only from agents built with streaming: true", async () => {
    const plain = await collect(
      new Single(agent("a", ["abcdefghijkl"])).stream(Session.fromUserMessage("hi")),
    );
    expect(plain.some((e) => e.type === "text_delta")).toBe(false);
    const streaming = await collect(
      new Single(agent("a", ["abcdefghijkl"], { streaming: true })).stream(Session.fromUserMessage("hi")),
    );
    expect(streaming.filter((e) => e.type === "text_delta")).toHaveLength(2);
  });

  it("also hands the events to RunOptions.onEvent", async () => {
    const seen: RunEvent[] = [];
    const events = await collect(
      new Single(agent("a")).stream(Session.fromUserMessage("hi"), { onEvent: (e) => seen.push(e) }),
    );
    expect(seen).toEqual(events.slice(0, -1));
  });

  it("throws forward's error from the iterator after the start event", async () => {
    const failing = new Single(new Agent({ name: "a", provider: new ScriptedProvider([]) }), { name: "w" });
    const events: RunEvent[] = [];
    let error: unknown;
    try {
      for await (const e of failing.stream(Session.fromUserMessage("hi"))) events.push(e);
    } catch (e) {
      error = e;
    }
    expect((error as { code?: string }).code).toBe("agent_failed");
    expect(events[0]).toEqual({ type: "workflow_start", workflow: "w", path: "w" });
    expect(events.some((e) => e.type === "workflow_end" || e.type === "session")).toBe(false);
  });
});
