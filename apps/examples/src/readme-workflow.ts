import { pathToFileURL } from "node:url";
import {
  Agent,
  Compressor,
  defineTool,
  lineageToText,
  type ProviderV1,
  type RunOptions,
  ScriptedProvider,
  Session,
  Workflow,
} from "@openrath/core";
import "@openrath/memory-bm25/register";
import { z } from "zod";

/** A tool with a zod schema: arguments are validated before `execute` runs. */
export const wordCount = defineTool({
  name: "word_count",
  description: "Count the words in a piece of text.",
  parameters: z.object({ text: z.string().describe("The text to count.") }),
  parallel: true,
  execute: ({ text }) => ({ words: text.split(/\s+/).filter(Boolean).length }),
});

/** The Python original's README workflow: an agent with a tool, then a compressor. */
export class ReadmeFlow extends Workflow {
  readonly assistant: Agent;
  readonly compressor: Compressor;

  constructor(provider: ProviderV1) {
    super({ name: "readme-flow" });
    this.assistant = new Agent({
      name: "assistant",
      provider,
      instructions: "You are a helpful assistant. Use word_count for counting.",
      tools: [wordCount],
      // Recalled before each run, committed after it (an in-memory store; give it a path to keep it).
      memory: "bm25",
      memoryScope: { user: "reader" },
    });
    this.compressor = new Compressor({ provider });
  }

  async forward(session: Session, options: RunOptions): Promise<Session> {
    const answered = await this.assistant.run(session, options);
    return this.compressor.run(answered, options);
  }
}

/** A scripted model for the keyless run: call the tool, answer from its result, then summarize. */
export function readmeScript(): ScriptedProvider {
  return new ScriptedProvider([
    { toolCalls: [{ name: "word_count", arguments: { text: "OpenRath makes sessions the unit of work" } }] },
    { text: "The sentence has 7 words." },
    {
      text: "The user asked how many words are in a sentence; word_count said 7, and the assistant answered 7.",
    },
  ]);
}

async function main() {
  const flow = new ReadmeFlow(readmeScript());
  const question = Session.fromUserMessage(
    'How many words are in "OpenRath makes sessions the unit of work"?',
  );
  const out = await flow.run(question);
  process.stdout.write(
    `${flow.describe()}\n\n${lineageToText(out)}\nSummary: ${out.messages()[0]?.content}\nTokens: ${out.usage.totalTokens}\n`,
  );
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? "").href) await main();
