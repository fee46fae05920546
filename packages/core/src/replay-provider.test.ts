import {
  Agent,
  AgentRunError,
  type Chunk,
  Compressor,
  defineTool,
  type ProviderDelta,
  ProviderError,
  type ProviderResponse,
  type ProviderV1,
  ReplayProvider,
  type RunOptions,
  ScriptedProvider,
  Selector,
  Session,
  Workflow,
} from "@openrath/core";
import { requestFingerprint } from "@openrath/core/backend";
import { describe, expect, it } from "vitest";
import { recordedCall } from "./replay-provider.js";

/** Chunks without what differs between two runs: ids, times and branch ids. */
const transcript = (session: Session) =>
  session.chunks.map(({ id: _id, createdAt: _t, sessionId: _s, ...rest }) => rest);

const lookup = defineTool<{ city: string }>({
  name: "lookup",
  description: "Look a city up",
  parameters: { type: "object", properties: { city: { type: "string" } }, required: ["city"] },
  parallel: true,
  execute: ({ city }) => ({ city, population: city.length * 1000 }),
});

const makeAgent = (provider: ProviderV1) =>
  new Agent({ name: "researcher", instructions: "Answer with numbers.", provider, tools: [lookup] });

const script = () =>
  new ScriptedProvider([
    {
      text: "Looking both up.",
      toolCalls: [
        { name: "lookup", arguments: { city: "Kyoto" } },
        { name: "lookup", arguments: { city: "Osaka" } },
      ],
      usage: { promptTokens: 50, completionTokens: 10 },
    },
    { text: "Kyoto 5000, Osaka 5000.", usage: { promptTokens: 90, completionTokens: 8 }, model: "big" },
  ]);

async function failure(promise: Promise<unknown>): Promise<AgentRunError> {
  try {
    await promise;
  } catch (error) {
    if (error instanceof AgentRunError) return error;
    throw error;
  }
  throw new Error("expected an AgentRunError");
}

describe("ReplayProvider: agents", () => {
  it("replays a run to an equal transcript without calling the original provider", async () => {
    const original = script();
    const input = Session.fromUserMessage("Populations of Kyoto and Osaka?");
    const recorded = await makeAgent(original).run(input);
    expect(original.callCount).toBe(2);

    const replay = ReplayProvider.from(recorded);
    expect(replay.remaining).toBe(2);
    const again = await makeAgent(replay).run(input);
    expect(original.callCount).toBe(2);
    expect(replay.servedCount).toBe(2);
    expect(replay.remaining).toBe(0);
    expect(transcript(again)).toEqual(transcript(recorded));
    expect(again.usage).toEqual(recorded.usage);
  });

  it("replays a streamed run, streaming the recorded text and tool calls", async () => {
    const input = Session.fromUserMessage("Populations?");
    const recorded = await makeAgent(script()).run(input);
    const events = [];
    for await (const event of makeAgent(ReplayProvider.from(recorded)).stream(input)) events.push(event);
    const last = events.at(-1);
    expect(last?.type).toBe("session");
    if (last?.type !== "session") return;
    expect(transcript(last.session)).toEqual(transcript(recorded));
    expect(
      events.filter((e) => e.type === "text_delta").map((e) => (e.type === "text_delta" ? e.text : "")),
    ).toEqual(["Looking both up.", "Kyoto 5000, Osaka 5000."]);
    expect(events.filter((e) => e.type === "tool_call_delta")).toHaveLength(2);
  });

  it("fails closed with replay_miss on a changed input, naming the call that diverged", async () => {
    const recorded = await makeAgent(script()).run(
      Session.fromUserMessage("Populations of Kyoto and Osaka?"),
    );
    const replay = ReplayProvider.from(recorded);
    const error = await failure(makeAgent(replay).run(Session.fromUserMessage("Populations of Nara?")));
    expect(error.code).toBe("agent_failed");
    const miss = error.cause as ProviderError;
    expect(ProviderError.isInstance(miss, "replay_miss")).toBe(true);
    expect(miss.retryable).toBe(false);
    expect(miss.message).toMatch(/^Replay diverged at model call 1: no recorded turn answers this request/);
    expect(miss.message).toContain('the last user: "Populations of Nara?"');
    expect(miss.message).toContain(
      'It is call 1 on branch leaf_user › loop:researcher. The next recorded turn, by researcher, answered a different request on this branch: message 1 was user: "Populations of Kyoto and Osaka?"; now user: "Populations of Nara?"',
    );
    expect(miss.details).toMatchObject({ call: 1, messages: 2, replayed: 0, remaining: 2 });
    expect(error.session.at(-1)).toMatchObject({ name: "agent.error", data: { code: "replay_miss" } });
  });

  it("names a later call when the run diverges midway (a tool whose result changed)", async () => {
    let population = 1;
    const drifting = defineTool({
      name: "lookup",
      description: "",
      parameters: {},
      execute: () => ({ population: population++ }),
    });
    const agent = (provider: ProviderV1) => new Agent({ name: "r", provider, tools: [drifting] });
    const input = Session.fromUserMessage("How many?");
    const recorded = await agent(
      new ScriptedProvider([{ toolCalls: [{ name: "lookup" }] }, { text: "one" }]),
    ).run(input);
    const error = await failure(agent(ReplayProvider.from(recorded)).run(input));
    const miss = error.cause as ProviderError;
    expect(miss.code).toBe("replay_miss");
    expect(miss.message).toMatch(
      /^Replay diverged at model call 2: .* It is call 2 on branch leaf_user › loop:r\./,
    );
    expect(miss.details).toMatchObject({ call: 2, replayed: 1, remaining: 1 });
    expect(error.session.chunks.filter((c) => c.kind === "assistant")).toHaveLength(1);
  });

  it("says so when every recorded turn was already replayed", async () => {
    const input = Session.fromUserMessage("hi");
    const recorded = await new Agent({ name: "a", provider: new ScriptedProvider([{ text: "hello" }]) }).run(
      input,
    );
    const replay = ReplayProvider.from(recorded);
    const agent = new Agent({ name: "a", provider: replay });
    await agent.run(input);
    const error = await failure(agent.run(input));
    expect((error.cause as Error).message).toContain(
      "Every recorded call on this branch has been replayed already: the branch now makes more calls than it did.",
    );
  });

  it("replays a workflow of parallel forks from the merged result", async () => {
    class Panel extends Workflow {
      constructor(
        readonly optimist: Agent,
        readonly pessimist: Agent,
      ) {
        super({ name: "panel" });
      }
      async forward(session: Session, options: RunOptions) {
        const [a, b] = await Promise.all([
          this.optimist.run(session.fork(), options),
          this.pessimist.run(session.fork(), options),
        ]);
        return a.merge(b);
      }
    }
    const build = (o: ProviderV1, p: ProviderV1) =>
      new Panel(
        new Agent({ name: "optimist", instructions: "Look on the bright side.", provider: o }),
        new Agent({ name: "pessimist", instructions: "Expect the worst.", provider: p }),
      );
    const input = Session.fromUserMessage("Will it rain?");
    const recorded = await build(
      new ScriptedProvider([{ text: "No, sunny." }]),
      new ScriptedProvider([{ text: "Yes, storms." }]),
    ).run(input);
    const replay = ReplayProvider.from(recorded);
    const again = await build(replay, replay).run(input);
    expect(transcript(again)).toEqual(transcript(recorded));
    expect(replay.remaining).toBe(0);
  });
});

describe("ReplayProvider: selectors and compressors", () => {
  const candidates = [
    new Agent({ name: "coder", description: "writes code", provider: new ScriptedProvider([]) }),
    new Agent({ name: "writer", description: "writes prose", provider: new ScriptedProvider([]) }),
  ];

  it("replays a selector's decision without calling the router model", async () => {
    const router = new ScriptedProvider([{ text: "1" }]);
    const input = Session.fromUserMessage("Write me a poem");
    const recorded = await new Selector({ provider: router }).route(input, candidates);
    expect(recorded.index).toBe(1);

    const replay = ReplayProvider.from(recorded.session);
    const again = await new Selector({ provider: replay }).route(input, candidates);
    expect(router.callCount).toBe(1);
    expect(replay.servedCount).toBe(1);
    expect(again.index).toBe(1);
    expect(again.target).toBe(candidates[1]);
    expect(transcript(again.session)).toEqual(transcript(recorded.session));
  });

  it("replays a compressor's summary without calling the model", async () => {
    const model = new ScriptedProvider([{ text: "The user greeted; the assistant answered." }]);
    const input = Session.fromUserMessage("hello").append({ kind: "assistant", content: "hi there" });
    const recorded = await new Compressor({ provider: model }).run(input);
    const replay = ReplayProvider.from(recorded);
    const again = await new Compressor({ provider: replay }).run(input);
    expect(model.callCount).toBe(1);
    expect(replay.servedCount).toBe(1);
    expect(transcript(again)).toEqual(transcript(recorded));
    expect(transcript(again)[0]).toMatchObject({
      kind: "user",
      content: "The user greeted; the assistant answered.",
    });
  });
});

describe("ReplayProvider: recordings", () => {
  const response = (content: string): ProviderResponse => ({
    content,
    toolCalls: [],
    finishReason: "stop",
    model: "m",
  });
  const request = { messages: [{ role: "user" as const, content: "same" }] };
  const hash = requestFingerprint(request);

  it("answers identical requests in recorded (time) order", async () => {
    const replay = new ReplayProvider([
      { requestHash: hash, response: response("second"), createdAt: 20 },
      { requestHash: hash, response: response("first"), createdAt: 10 },
      { requestHash: hash, response: response("third"), createdAt: 30 },
    ]);
    const answers = [];
    for (let i = 0; i < 3; i++) answers.push((await replay.complete(request)).content);
    expect(answers).toEqual(["first", "second", "third"]);
    await expect(replay.complete(request)).rejects.toMatchObject({ code: "replay_miss" });
  });

  it("answers the identical requests of two forks in the order they were recorded", async () => {
    const root = Session.fromUserMessage("Name a colour");
    const original = new ScriptedProvider([{ text: "red" }, { text: "blue" }]);
    const agent = new Agent({ name: "a", provider: original });
    const first = await agent.run(root.fork());
    const second = await agent.run(root.fork());
    const replay = ReplayProvider.from(first, second);
    const replayed = new Agent({ name: "a", provider: replay });
    expect((await replayed.run(root.fork())).text()).toBe("red");
    expect((await replayed.run(root.fork())).text()).toBe("blue");
  });

  it("counts a chunk held by several recordings once", async () => {
    const input = Session.fromUserMessage("hi");
    const out = await new Agent({ name: "a", provider: new ScriptedProvider([{ text: "x" }]) }).run(input);
    const replay = ReplayProvider.from(out, out.fork(), out.chunks);
    expect(replay.remaining).toBe(1);
  });

  it("takes recorded model calls from assistant, summary and selector chunks only", async () => {
    const usage = { promptTokens: 1, completionTokens: 2, totalTokens: 3 };
    const chunks = Session.fromUserMessage("plain user text")
      .append(
        { kind: "assistant", content: "no hash" },
        {
          kind: "assistant",
          content: null,
          toolCalls: [{ id: "c1", type: "function", function: { name: "t", arguments: "{}" } }],
          requestHash: "h1",
          usage,
          author: "a",
        },
        { kind: "tool_result", toolCallId: "c1", name: "t", content: "{}" },
        { kind: "user", content: "summary", requestHash: "h2", model: "sum" },
        {
          kind: "event",
          name: "selector.decision",
          data: { requestHash: "h3", reply: "0", model: "r", usage },
        },
        { kind: "event", name: "selector.decision", data: { index: 0, reason: "rule" } },
        { kind: "event", name: "budget.exceeded", data: { requestHash: "h4" } },
      )
      .chunks.map((c: Chunk) => recordedCall(c));
    expect(chunks.map((c) => c?.requestHash)).toEqual([
      undefined,
      undefined,
      "h1",
      undefined,
      "h2",
      "h3",
      undefined,
      undefined,
    ]);
    expect(chunks[2]).toMatchObject({
      author: "a",
      response: { content: null, finishReason: "tool_calls", model: "replay", usage },
    });
    expect(chunks[2]!.response.toolCalls).toHaveLength(1);
    expect(chunks[4]!.response).toEqual({
      content: "summary",
      toolCalls: [],
      finishReason: "stop",
      model: "sum",
    });
    expect(chunks[5]!.response).toEqual({
      content: "0",
      toolCalls: [],
      finishReason: "stop",
      model: "r",
      usage,
    });
  });

  it("streams a recorded answer as text and whole tool calls, then the response", async () => {
    const withCalls: ProviderResponse = {
      content: "ok",
      toolCalls: [{ id: "c9", type: "function", function: { name: "t", arguments: '{"a":1}' } }],
      finishReason: "tool_calls",
      model: "m",
    };
    const replay = new ReplayProvider([{ requestHash: hash, response: withCalls, createdAt: 1 }]);
    const deltas: ProviderDelta[] = [];
    for await (const d of replay.stream(request)) deltas.push(d);
    expect(deltas).toEqual([
      { type: "text", text: "ok" },
      { type: "tool_call", index: 0, id: "c9", name: "t", arguments: '{"a":1}' },
      { type: "response", response: withCalls },
    ]);
  });

  it("rejects with aborted for a fired signal without using up a recording", async () => {
    const replay = new ReplayProvider([{ requestHash: hash, response: response("x"), createdAt: 1 }]);
    await expect(replay.complete(request, { signal: AbortSignal.abort() })).rejects.toMatchObject({
      code: "aborted",
    });
    expect(replay.remaining).toBe(1);
  });

  it("describes itself as a v1 provider named replay", () => {
    expect(new ReplayProvider([])).toMatchObject({ specVersion: "v1", name: "replay", model: "replay" });
  });
});
