import { Agent, defineTool, type ProviderRequest, ScriptedProvider, Session } from "@openrath/core";
import { z } from "zod";
import {
  ANSWER,
  type Counts,
  countWords,
  QUESTION,
  type RunShape,
  SAMPLE,
  type Side,
  TOOL_RESULT,
  USAGE,
  wantsTool,
} from "./workload.js";

/** OpenRath's Agent on a ScriptedProvider; with streaming, the consumer reads every `agent.stream()` event. */
export function openrathSide(streaming: boolean): Side {
  const counts: Counts = { model: 0, tool: 0 };
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
    let done = 0;
    for (const m of request.messages) if (m.role === "tool") done++;
    return wantsTool(done)
      ? { toolCalls: [{ name: "word_count", arguments: { text: SAMPLE } }], usage: USAGE }
      : { text: ANSWER, usage: USAGE };
  });
  const agent = new Agent({ name: "bench", provider, tools: [wordCount] });
  const shape = (session: Session, streamed: number): RunShape => {
    // The provider keeps every request for assertions; a bench running thousands of loops would
    // otherwise measure that list growing.
    provider.requests.length = 0;
    let assistant = 0;
    let toolResults = 0;
    let failedResults = 0;
    for (const c of session.chunks) {
      if (c.kind === "assistant") assistant++;
      else if (c.kind === "tool_result") {
        toolResults++;
        if (c.isError || c.content !== TOOL_RESULT) failedResults++;
      }
    }
    return { assistant, toolResults, failedResults, answer: session.text(), streamed };
  };
  return {
    name: streaming ? "openrath_stream" : "openrath",
    what: `@openrath/core Agent${streaming ? ".stream()" : ".run()"}`,
    streaming,
    counts,
    run: streaming
      ? async () => {
          let streamed = 0;
          let out: Session | undefined;
          for await (const event of agent.stream(Session.fromUserMessage(QUESTION))) {
            streamed++;
            if (event.type === "session") out = event.session;
          }
          return shape(out!, streamed);
        }
      : async () => shape(await agent.run(Session.fromUserMessage(QUESTION)), 0),
  };
}
