import {
  Agent,
  AgentRunError,
  defineTool,
  type ProviderCallOptions,
  ProviderError,
  type ProviderRequest,
  type ProviderV1,
  ReplayProvider,
  type RunOptions,
  RunRecorder,
  ScriptedProvider,
  Session,
  Workflow,
} from "@openrath/core";
import { describe, expect, it } from "vitest";

/** A provider that waits `ms` before handing the call to `inner`. */
const slowed = (inner: ProviderV1, ms: number): ProviderV1 => ({
  specVersion: "v1",
  name: inner.name,
  model: inner.model,
  async complete(request: ProviderRequest, options?: ProviderCallOptions) {
    await new Promise((r) => setTimeout(r, ms));
    return inner.complete(request, options);
  },
});

/** Two critics with the same name, instructions and input: their requests are identical. */
class TwoOpinions extends Workflow {
  constructor(
    readonly first: Agent,
    readonly second: Agent,
  ) {
    super({ name: "two-opinions" });
  }
  async forward(session: Session, options: RunOptions) {
    const [a, b] = await Promise.all([
      this.first.run(session.fork(), options),
      this.second.run(session.fork(), options),
    ]);
    return a.merge(b);
  }
}

const critic = (provider: ProviderV1) => new Agent({ name: "critic", instructions: "Judge it.", provider });

const answers = (session: Session) =>
  session.chunks.filter((c) => c.kind === "assistant").map((c) => (c as { content: string }).content);

describe("ReplayProvider under parallel branches", () => {
  it("answers identical requests of parallel branches by branch, whatever order they arrive in", async () => {
    const input = Session.fromUserMessage("Is the draft good?");
    // Recorded: the first fork answers first ("yes"), the second later ("no").
    const recorded = await new TwoOpinions(
      critic(new ScriptedProvider([{ text: "yes" }])),
      critic(new ScriptedProvider([{ text: "no", delayMs: 15 }])),
    ).run(input);
    expect(answers(recorded)).toEqual(["yes", "no"]);

    // Replayed: now the first fork's request arrives last. By time order it would get "no".
    const replay = ReplayProvider.from(recorded);
    const again = await new TwoOpinions(critic(slowed(replay, 25)), critic(replay)).run(input);
    expect(answers(again)).toEqual(["yes", "no"]);
    expect(replay.remaining).toBe(0);
  });

  it("keeps every branch of a recorded run apart when replaying from the recorder's sessions", async () => {
    const lookup = defineTool({
      name: "lookup",
      description: "",
      parameters: {},
      parallel: true,
      execute: () => ({ found: true }),
    });
    const agent = (provider: ProviderV1) =>
      new Agent({ name: "worker", instructions: "Look it up.", provider, tools: [lookup] });
    class Fan extends Workflow {
      readonly workers: Agent[];
      constructor(providers: ProviderV1[]) {
        super({ name: "fan" });
        this.workers = providers.map(agent);
      }
      async forward(session: Session, options: RunOptions) {
        const outs = await Promise.all(this.workers.map((w) => w.run(session.fork(), options)));
        return outs.reduce((a, b) => a.merge(b));
      }
    }
    const input = Session.fromUserMessage("Find it.");
    const recorder = new RunRecorder();
    const scripted = [0, 1, 2].map(
      (i) =>
        new ScriptedProvider([
          { toolCalls: [{ name: "lookup", id: `c${i}` }], delayMs: 5 * (3 - i) },
          { text: `worker ${i} done`, delayMs: 5 * i },
        ]),
    );
    const recorded = await new Fan(scripted).run(input, { onEvent: recorder.onEvent });
    const replay = ReplayProvider.from(...recorder.sessions());
    // Reverse the arrival order of the replayed calls.
    const again = await new Fan([0, 1, 2].map((i) => slowed(replay, 8 * i))).run(input);
    expect(answers(again)).toEqual(answers(recorded));
    expect(replay.remaining).toBe(0);
  });

  it("names the branch, the call and what differs when a branch diverges", async () => {
    const input = Session.fromUserMessage("Is the draft good?");
    const recorded = await new TwoOpinions(
      critic(new ScriptedProvider([{ text: "yes" }])),
      critic(new ScriptedProvider([{ text: "no" }])),
    ).run(input);
    const replay = ReplayProvider.from(recorded);
    const changed = new Agent({
      name: "critic",
      instructions: "Judge it harshly.",
      provider: replay,
      tools: [defineTool({ name: "grep", description: "", parameters: {}, execute: () => 1 })],
      request: { toolChoice: "none" },
    });
    let error: unknown;
    try {
      await new TwoOpinions(critic(replay), changed).run(input);
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(AgentRunError);
    const miss = (error as AgentRunError).cause as ProviderError;
    expect(ProviderError.isInstance(miss, "replay_miss")).toBe(true);
    // The second fork of the input, the critic's run on it, its first call.
    expect(miss.message).toContain("It is call 1 on branch leaf_user › fork#1 › loop:critic.");
    expect(miss.message).toContain('parameter toolChoice was null, now "none"');
    expect(miss.message).toContain("tool grep is new");
    expect(miss.message).toContain("message 0 (system, the instructions) changed");
    expect(miss.details).toMatchObject({ branchCall: 1 });
    expect(miss.details.differences).toEqual([
      'parameter toolChoice was null, now "none"',
      "tool grep is new",
      "message 0 (system, the instructions) changed",
    ]);
  });

  it("names the message that differs, with both sides, on a later call", async () => {
    let n = 0;
    const counter = defineTool({
      name: "count",
      description: "",
      parameters: {},
      execute: () => ({ n: n++ }),
    });
    const agent = (provider: ProviderV1) => new Agent({ name: "counter", provider, tools: [counter] });
    const input = Session.fromUserMessage("Count.");
    const recorded = await agent(
      new ScriptedProvider([{ toolCalls: [{ name: "count" }] }, { text: "done" }]),
    ).run(input);
    let error: unknown;
    try {
      await agent(ReplayProvider.from(recorded)).run(input);
    } catch (e) {
      error = e;
    }
    const miss = (error as AgentRunError).cause as ProviderError;
    expect(miss.message).toContain("It is call 2 on branch leaf_user › loop:counter.");
    expect(miss.message).toContain('message 2 was tool: "{\\"n\\":0}"; now tool: "{\\"n\\":1}"');
  });
});
