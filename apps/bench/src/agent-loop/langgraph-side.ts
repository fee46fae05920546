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
import { z } from "zod";
import {
  ANSWER,
  type Counts,
  countWords,
  QUESTION,
  SAMPLE,
  type Side,
  TOOL_RESULT,
  USAGE,
  wantsTool,
} from "./workload.js";

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

/** LangGraph.js's prebuilt ReAct agent (`createReactAgent`) driving the scripted chat model, `invoke`d. */
export function langgraphSide(): Side {
  const counts: Counts = { model: 0, tool: 0 };
  const wordCount = tool(
    ({ text }: { text: string }) => {
      counts.tool++;
      return { words: countWords(text) };
    },
    { name: "word_count", description: "Count the words in a text", schema: z.object({ text: z.string() }) },
  );
  const graph = createReactAgent({ llm: new ScriptedChatModel(counts), tools: [wordCount] });
  return {
    name: "langgraph",
    what: "@langchain/langgraph createReactAgent invoke",
    streaming: false,
    counts,
    async run() {
      const state = await graph.invoke({ messages: [new HumanMessage(QUESTION)] });
      const messages = state.messages as BaseMessage[];
      const toolMessages = messages.filter((m) => isToolMessage(m));
      return {
        assistant: messages.filter((m) => isAIMessage(m)).length,
        toolResults: toolMessages.length,
        failedResults: toolMessages.filter((m) => m.status === "error" || m.content !== TOOL_RESULT).length,
        answer: messages.at(-1)?.content,
        streamed: 0,
      };
    },
  };
}
