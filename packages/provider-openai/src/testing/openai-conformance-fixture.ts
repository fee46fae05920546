import type {
  DecodedMessage,
  DecodedRequest,
  ProviderWireFixture,
  WireScript,
  WireTurn,
} from "@openrath/testing/provider";
import { errorReply, faultedStream, OPENAI_ERRORS } from "./conformance-shared.js";
import {
  chatCompletion,
  chatCompletionChunks,
  type OpenAIWireServer,
  startOpenAIWireServer,
  type WireCompletion,
  type WireReply,
} from "./openai-wire-server.js";
import { decodeResponsesRequest, responsesReply } from "./responses-conformance.js";

/** Which OpenAI API the fixture speaks. */
export type OpenAIFixtureApi = "chat" | "responses";

/** The provider conformance fixture over {@link startOpenAIWireServer}, plus the server's base URL. */
export interface OpenAIConformanceFixture extends ProviderWireFixture {
  /** The `baseURL` to hand to the provider (`…/v1`). */
  readonly baseURL: string;
  readonly server: OpenAIWireServer;
}

function completion(turn: WireTurn): WireCompletion {
  const usage = turn.usage === undefined ? { input: 10, output: 5 } : turn.usage;
  return {
    ...(turn.model !== undefined ? { model: turn.model } : {}),
    ...(turn.text !== undefined && turn.text.length > 0 ? { content: turn.text } : {}),
    ...(turn.toolCalls !== undefined ? { toolCalls: turn.toolCalls } : {}),
    ...(turn.finish !== undefined ? { finishReason: turn.finish } : {}),
    usage: usage === null ? null : { prompt_tokens: usage.input, completion_tokens: usage.output },
  };
}

function chatReply(script: WireScript): WireReply {
  switch (script.type) {
    case "reply":
      return { type: "json", body: chatCompletion(completion(script.turn)) };
    case "error":
      return errorReply(script);
    case "hang":
      return { type: "hang" };
    case "stream": {
      const events = chatCompletionChunks(completion(script.turn));
      if (script.fault === undefined) return { type: "stream", events };
      // The role chunk comes first, then one chunk per text piece.
      return faultedStream(events, 1 + script.fault.afterText, script.fault, (kind) => ({
        data: {
          error: {
            message: `conformance ${kind}`,
            type: OPENAI_ERRORS[kind].type,
            param: null,
            code: OPENAI_ERRORS[kind].code,
          },
        },
      }));
    }
  }
}

function text(content: unknown): string {
  if (typeof content === "string") return content;
  if (!Array.isArray(content)) return "";
  return content.map((part) => (typeof part?.text === "string" ? part.text : "")).join("");
}

// biome-ignore lint/suspicious/noExplicitAny: decodes an arbitrary recorded JSON body.
function decodeChatRequest(body: any): DecodedRequest {
  const system: string[] = [];
  const messages: DecodedMessage[] = [];
  for (const m of body.messages ?? []) {
    if (m.role === "system" || m.role === "developer") system.push(text(m.content));
    else if (m.role === "user") messages.push({ role: "user", text: text(m.content) });
    else if (m.role === "tool")
      messages.push({ role: "tool", toolCallId: m.tool_call_id, content: text(m.content) });
    else if (m.role === "assistant") {
      messages.push({
        role: "assistant",
        text: text(m.content),
        toolCalls: (m.tool_calls ?? []).map(
          (c: { id: string; function: { name: string; arguments: string } }) => ({
            id: c.id,
            name: c.function.name,
            arguments: JSON.parse(c.function.arguments),
          }),
        ),
        reasoning: [],
      });
    }
  }
  const choice = body.tool_choice;
  return {
    stream: body.stream === true,
    model: body.model,
    system: system.length > 0 ? system.join("\n\n") : undefined,
    messages,
    tools: (body.tools ?? []).map((t: { function: Record<string, unknown> }) => ({
      name: t.function.name,
      ...(t.function.description !== undefined ? { description: t.function.description } : {}),
      parameters: t.function.parameters,
    })),
    toolChoice: typeof choice === "object" && choice !== null ? { name: choice.function.name } : choice,
    maxTokens: body.max_completion_tokens ?? body.max_tokens,
    temperature: body.temperature,
    topP: body.top_p,
    stop: typeof body.stop === "string" ? [body.stop] : body.stop,
    body,
  };
}

/**
 * Starts an OpenAI wire server and wraps it as a provider conformance fixture for the Chat
 * Completions API (`api: "chat"`) or the Responses API (`api: "responses"`): neutral turns become
 * that API's bodies and event streams, failures its statuses and error bodies, and recorded
 * requests decode back into neutral terms.
 */
export async function startOpenAIConformanceFixture(
  api: OpenAIFixtureApi = "chat",
): Promise<OpenAIConformanceFixture> {
  const server = await startOpenAIWireServer();
  const path = api === "chat" ? "/v1/chat/completions" : "/v1/responses";
  const mine = () => server.requests.filter((r) => r.path === path);
  return {
    baseURL: server.baseURL,
    server,
    enqueue: (...scripts) => server.enqueue(...scripts.map(api === "chat" ? chatReply : responsesReply)),
    requests: () =>
      mine().map((r) => (api === "chat" ? decodeChatRequest(r.body) : decodeResponsesRequest(r.body))),
    closed: async (index) => {
      while (mine()[index] === undefined) await new Promise((resolve) => setTimeout(resolve, 5));
      return mine()[index]!.closedEarly;
    },
    close: () => server.close(),
  };
}
