import {
  Agent,
  type AgentInputItem,
  type Model,
  type ModelRequest,
  type ModelResponse,
  Runner,
  type StreamEvent,
  setTracingDisabled,
  tool,
  Usage,
} from "@openai/agents-core";
import { z } from "zod";
import {
  ANSWER,
  type Counts,
  countWords,
  DELTA_CHARS,
  QUESTION,
  SAMPLE,
  type Side,
  TOOL_RESULT,
  USAGE,
  wantsTool,
} from "./workload.js";

// No traces: the SDK would otherwise batch every run's spans for an exporter.
setTracingDisabled(true);

type Output = ModelResponse["output"];

/**
 * A `Model` that costs nothing and answers as the scripted models of the other sides do: one
 * `word_count` function call until the tool has run TOOL_TURNS times, then the answer. Streaming
 * yields the answer in DELTA_CHARS-character `output_text_delta` events, then `response_done`.
 */
class ScriptedModel implements Model {
  private calls = 0;

  constructor(private readonly counts: Counts) {}

  private reply(request: ModelRequest): Output {
    this.counts.model++;
    if (!request.tools.some((t) => t.name === "word_count")) throw new Error("word_count not sent");
    const input = request.input as AgentInputItem[];
    let done = 0;
    for (const item of input) if (item.type === "function_call_result") done++;
    return wantsTool(done)
      ? [
          {
            type: "function_call",
            callId: `call_${++this.calls}`,
            name: "word_count",
            arguments: JSON.stringify({ text: SAMPLE }),
            status: "completed",
          },
        ]
      : [
          {
            type: "message",
            role: "assistant",
            status: "completed",
            content: [{ type: "output_text", text: ANSWER }],
          },
        ];
  }

  private usage(): Usage {
    return new Usage({
      requests: 1,
      inputTokens: USAGE.promptTokens,
      outputTokens: USAGE.completionTokens,
      totalTokens: USAGE.totalTokens,
    });
  }

  async getResponse(request: ModelRequest): Promise<ModelResponse> {
    return { usage: this.usage(), output: this.reply(request) };
  }

  async *getStreamedResponse(request: ModelRequest): AsyncIterable<StreamEvent> {
    const output = this.reply(request);
    yield { type: "response_started" };
    const text = output[0]?.type === "message" ? ANSWER : "";
    for (let i = 0; i < text.length; i += DELTA_CHARS) {
      yield { type: "output_text_delta", delta: text.slice(i, i + DELTA_CHARS) };
    }
    yield {
      type: "response_done",
      response: {
        id: `resp_${this.calls}`,
        usage: {
          requests: 1,
          inputTokens: USAGE.promptTokens,
          outputTokens: USAGE.completionTokens,
          totalTokens: USAGE.totalTokens,
        },
        output,
      },
    } as StreamEvent;
  }
}

/** The OpenAI Agents SDK (`@openai/agents-core` Runner) on the scripted model, tracing off. */
export function openaiAgentsSide(streaming: boolean): Side {
  const counts: Counts = { model: 0, tool: 0 };
  const model = new ScriptedModel(counts);
  const wordCount = tool({
    name: "word_count",
    description: "Count the words in a text",
    parameters: z.object({ text: z.string() }),
    execute: async ({ text }) => {
      counts.tool++;
      return { words: countWords(text) };
    },
  });
  const agent = new Agent({ name: "bench", model, tools: [wordCount] });
  const runner = new Runner({ model, tracingDisabled: true });
  const shape = (history: AgentInputItem[], finalOutput: unknown, streamed: number) => {
    const results = history.filter((i) => i.type === "function_call_result");
    const text = (i: AgentInputItem) =>
      i.type === "function_call_result" && typeof i.output === "object" && "text" in i.output
        ? i.output.text
        : i;
    return {
      // A model turn is a function call or the final message.
      assistant: history.filter(
        (i) => i.type === "function_call" || (i.type === "message" && i.role === "assistant"),
      ).length,
      toolResults: results.length,
      failedResults: results.filter((i) => text(i) !== TOOL_RESULT).length,
      answer: finalOutput,
      streamed,
    };
  };
  return {
    name: streaming ? "openai_agents_stream" : "openai_agents",
    what: `@openai/agents-core Runner.run${streaming ? " with stream: true" : ""}`,
    streaming,
    counts,
    run: streaming
      ? async () => {
          const result = await runner.run(agent, QUESTION, { maxTurns: 20, stream: true });
          let streamed = 0;
          for await (const _event of result) streamed++;
          await result.completed;
          return shape(result.history, result.finalOutput, streamed);
        }
      : async () => {
          const result = await runner.run(agent, QUESTION, { maxTurns: 20 });
          return shape(result.history, result.finalOutput, 0);
        },
  };
}
