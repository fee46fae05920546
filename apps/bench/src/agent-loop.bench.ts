import { BaseChatModel } from "@langchain/core/language_models/chat_models";
import {
  AIMessage,
  type BaseMessage,
  HumanMessage,
  isAIMessage,
  isToolMessage,
} from "@langchain/core/messages";
import type { ChatResult } from "@langchain/core/outputs";
import { type StructuredToolInterface, tool } from "@langchain/core/tools";
import { convertToOpenAITool } from "@langchain/core/utils/function_calling";
import { createReactAgent } from "@langchain/langgraph/prebuilt";
import { Agent, defineTool, type ProviderRequest, ScriptedProvider, Session } from "@openrath/core";
import { z } from "zod";
import { elapsedUs, emit, median, progressFor, quantile, round } from "./internal/report.js";

// Agent-loop overhead per turn: OpenRath's Agent against LangGraph.js's prebuilt ReAct agent, both
// driving the same free scripted model and the same trivial tool, measured in the same process.
// The model answers instantly and the tool counts words, so a run's wall time is the loop's own
// cost: building requests, keeping the transcript, dispatching and validating tool calls.

// LangChain reads these when a run starts; a tracing variable left in the environment would send
// every run to LangSmith. This bench talks to nothing.
for (const name of [
  "LANGSMITH_TRACING",
  "LANGSMITH_TRACING_V2",
  "LANGCHAIN_TRACING",
  "LANGCHAIN_TRACING_V2",
]) {
  delete process.env[name];
}

const progress = progressFor("agent-loop.bench");

/** Model calls per run: turns 1 to 9 each call `word_count` once, turn 10 answers in text. */
const TURNS = 10;
const TOOL_TURNS = TURNS - 1;
const QUESTION = "How many words are in the sample, counted ten times over?";
const SAMPLE = "the quick brown fox jumps over the lazy dog";
const SAMPLE_WORDS = 9;
const ANSWER = `${SAMPLE_WORDS} words, every time.`;
const USAGE = { promptTokens: 100, completionTokens: 10, totalTokens: 110 };

/** What each side did, counted inside the model and the tool so both can be checked to match. */
interface Counts {
  model: number;
  tool: number;
}

const countWords = (text: string) => text.split(/\s+/).filter(Boolean).length;

/** The one rule both scripted models follow: call the tool until it has run TOOL_TURNS times. */
const wantsTool = (toolResults: number) => toolResults < TOOL_TURNS;

function createOurs(counts: Counts): () => Promise<Session> {
  const wordCount = defineTool({
    name: "word_count",
    description: "Count the words in a text",
    parameters: z.object({ text: z.string() }),
    execute: ({ text }) => {
      counts.tool++;
      return { words: countWords(text) };
    },
  });
  const provider = new ScriptedProvider((request: ProviderRequest) => {
    counts.model++;
    if (!request.tools?.some((t) => t.function.name === "word_count")) throw new Error("word_count not sent");
    const done = request.messages.filter((m) => m.role === "tool").length;
    return wantsTool(done)
      ? { toolCalls: [{ name: "word_count", arguments: { text: SAMPLE } }], usage: USAGE }
      : { text: ANSWER, usage: USAGE };
  });
  const agent = new Agent({ name: "bench", provider, tools: [wordCount] });
  return async () => {
    const out = await agent.run(Session.fromUserMessage(QUESTION));
    // The provider keeps every request for assertions; a bench running thousands of loops would
    // otherwise measure that list growing.
    provider.requests.length = 0;
    return out;
  };
}

/**
 * A chat model that costs nothing and answers like a tool-calling model: an AIMessage with one
 * `word_count` call until the tool has run TOOL_TURNS times, then text. `bindTools` binds the
 * tools' OpenAI specs as call options, as the real chat models do.
 */
class ScriptedChatModel extends BaseChatModel {
  private calls = 0;

  constructor(private readonly counts: Counts) {
    super({});
  }

  _llmType(): string {
    return "scripted";
  }

  override bindTools(tools: StructuredToolInterface[]) {
    return this.withConfig({ tools: tools.map((t) => convertToOpenAITool(t)) } as Partial<
      this["ParsedCallOptions"]
    >);
  }

  async _generate(messages: BaseMessage[], options: this["ParsedCallOptions"]): Promise<ChatResult> {
    this.counts.model++;
    const tools = (options as { tools?: { function?: { name?: string } }[] }).tools;
    if (!tools?.some((t) => t.function?.name === "word_count")) throw new Error("word_count not bound");
    const done = messages.filter((m) => isToolMessage(m)).length;
    const usage_metadata = {
      input_tokens: USAGE.promptTokens,
      output_tokens: USAGE.completionTokens,
      total_tokens: USAGE.totalTokens,
    };
    const message = wantsTool(done)
      ? new AIMessage({
          content: "",
          tool_calls: [
            { id: `call_${++this.calls}`, name: "word_count", args: { text: SAMPLE }, type: "tool_call" },
          ],
          usage_metadata,
        })
      : new AIMessage({ content: ANSWER, usage_metadata });
    return { generations: [{ text: typeof message.content === "string" ? message.content : "", message }] };
  }
}

function createAnchor(counts: Counts): () => Promise<BaseMessage[]> {
  const wordCount = tool(
    ({ text }: { text: string }) => {
      counts.tool++;
      return { words: countWords(text) };
    },
    { name: "word_count", description: "Count the words in a text", schema: z.object({ text: z.string() }) },
  );
  const graph = createReactAgent({ llm: new ScriptedChatModel(counts), tools: [wordCount] });
  return async () => {
    const state = await graph.invoke({ messages: [new HumanMessage(QUESTION)] });
    return state.messages;
  };
}

/** Checks one run of each side did the whole workload and nothing else; returns the counts. */
async function verify(
  ours: () => Promise<Session>,
  anchor: () => Promise<BaseMessage[]>,
  ourCounts: Counts,
  anchorCounts: Counts,
) {
  const before = { ours: { ...ourCounts }, anchor: { ...anchorCounts } };
  const session = await ours();
  const messages = await anchor();
  const ourRun = { model: ourCounts.model - before.ours.model, tool: ourCounts.tool - before.ours.tool };
  const anchorRun = {
    model: anchorCounts.model - before.anchor.model,
    tool: anchorCounts.tool - before.anchor.tool,
  };
  const expected = { model: TURNS, tool: TOOL_TURNS };
  const results = session.chunks.filter((c) => c.kind === "tool_result");
  const ourShape = {
    assistant: session.chunks.filter((c) => c.kind === "assistant").length,
    toolResults: results.length,
    failedResults: results.filter((c) => c.isError || c.content !== `{"words":${SAMPLE_WORDS}}`).length,
    answer: session.text(),
  };
  const toolMessages = messages.filter((m) => isToolMessage(m));
  const anchorShape = {
    assistant: messages.filter((m) => isAIMessage(m)).length,
    toolResults: toolMessages.length,
    failedResults: toolMessages.filter(
      (m) => m.status === "error" || m.content !== `{"words":${SAMPLE_WORDS}}`,
    ).length,
    answer: messages.at(-1)?.content,
  };
  const want = { assistant: TURNS, toolResults: TOOL_TURNS, failedResults: 0, answer: ANSWER };
  for (const [side, counts, shape] of [
    ["openrath", ourRun, ourShape],
    ["langgraph", anchorRun, anchorShape],
  ] as const) {
    if (
      JSON.stringify(counts) !== JSON.stringify(expected) ||
      JSON.stringify(shape) !== JSON.stringify(want)
    ) {
      throw new Error(
        `${side} did different work: counted ${JSON.stringify(counts)} and produced ${JSON.stringify(shape)}, expected ${JSON.stringify(expected)} and ${JSON.stringify(want)}.`,
      );
    }
  }
  return { ours: ourRun, anchor: anchorRun };
}

/** Wall time of each of `runs` sequential runs, in microseconds. */
async function timeRuns(run: () => Promise<unknown>, runs: number, into: number[]): Promise<void> {
  for (let i = 0; i < runs; i++) {
    const start = process.hrtime.bigint();
    await run();
    into.push(elapsedUs(start));
  }
}

const started = process.hrtime.bigint();
progress(`node ${process.version}, ${process.platform}/${process.arch}`);

const ourCounts: Counts = { model: 0, tool: 0 };
const anchorCounts: Counts = { model: 0, tool: 0 };
const ours = createOurs(ourCounts);
const anchor = createAnchor(anchorCounts);
const perRun = await verify(ours, anchor, ourCounts, anchorCounts);

{
  const ROUNDS = 40;
  const OUR_RUNS = 100;
  const ANCHOR_RUNS = 25;
  progress("warm-up");
  const discard: number[] = [];
  await timeRuns(ours, 2_000, discard);
  await timeRuns(anchor, 300, discard);
  progress(`measuring: ${ROUNDS} rounds of ${OUR_RUNS} OpenRath and ${ANCHOR_RUNS} LangGraph runs`);
  const ourTimes: number[] = [];
  const anchorTimes: number[] = [];
  const countsBefore = { ours: { ...ourCounts }, anchor: { ...anchorCounts } };
  // Interleaved rounds, alternating which side goes first, so both see the same machine conditions.
  for (let round = 0; round < ROUNDS; round++) {
    if (round % 2 === 0) {
      await timeRuns(ours, OUR_RUNS, ourTimes);
      await timeRuns(anchor, ANCHOR_RUNS, anchorTimes);
    } else {
      await timeRuns(anchor, ANCHOR_RUNS, anchorTimes);
      await timeRuns(ours, OUR_RUNS, ourTimes);
    }
  }
  const measured = {
    ours: { model: ourCounts.model - countsBefore.ours.model, tool: ourCounts.tool - countsBefore.ours.tool },
    anchor: {
      model: anchorCounts.model - countsBefore.anchor.model,
      tool: anchorCounts.tool - countsBefore.anchor.tool,
    },
  };
  if (
    measured.ours.model !== ourTimes.length * TURNS ||
    measured.ours.tool !== ourTimes.length * TOOL_TURNS ||
    measured.anchor.model !== anchorTimes.length * TURNS ||
    measured.anchor.tool !== anchorTimes.length * TOOL_TURNS
  ) {
    throw new Error(`the timed runs did different work: ${JSON.stringify(measured)}`);
  }
  const ourRun = median(ourTimes);
  const anchorRun = median(anchorTimes);
  const ourTurn = ourRun / TURNS;
  const anchorTurn = anchorRun / TURNS;
  const ratio = ourTurn / anchorTurn;
  emit({
    case: "agent_loop",
    turns_per_run: TURNS,
    model_calls_per_run: perRun.ours.model,
    tool_executions_per_run: perRun.ours.tool,
    anchor: "@langchain/langgraph createReactAgent",
    anchor_model_calls_per_run: perRun.anchor.model,
    anchor_tool_executions_per_run: perRun.anchor.tool,
    runs: ourTimes.length,
    anchor_runs: anchorTimes.length,
    median_us_per_run: round(ourRun, 1),
    median_us_per_turn: round(ourTurn, 1),
    p10_us_per_turn: round(quantile(ourTimes, 0.1) / TURNS, 1),
    p90_us_per_turn: round(quantile(ourTimes, 0.9) / TURNS, 1),
    anchor_median_us_per_run: round(anchorRun, 1),
    anchor_median_us_per_turn: round(anchorTurn, 1),
    anchor_p10_us_per_turn: round(quantile(anchorTimes, 0.1) / TURNS, 1),
    anchor_p90_us_per_turn: round(quantile(anchorTimes, 0.9) / TURNS, 1),
    ratio_ours_to_anchor: round(ratio, 3),
    speedup_vs_anchor: round(anchorTurn / ourTurn, 1),
    target: "agent-loop overhead per turn at most half of LangGraph's prebuilt ReAct agent's (ratio <= 0.5)",
    meets_target: ratio <= 0.5,
  });
}

progress(`done in ${round(elapsedUs(started) / 1e6, 1)} s`);
