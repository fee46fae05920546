import type {
  ToolChoice as AnthropicToolChoice,
  ContentBlockParam,
  MessageParam,
  TextBlockParam,
  Tool,
  ToolResultBlockParam,
  ToolUseBlockParam,
} from "@anthropic-ai/sdk/resources/messages";
import { type JsonObject, type Message, ProviderError, type ProviderRequest } from "@openrath/core";
import { fromReasoningItems } from "./thinking-blocks.js";

/** Provider-level defaults a request falls back on. */
export interface RequestDefaults {
  readonly model: string;
  readonly maxTokens: number;
  readonly temperature?: number | undefined;
  readonly topP?: number | undefined;
  readonly stop?: readonly string[] | undefined;
  readonly structuredOutput: "tool" | "native";
  readonly extra?: Readonly<Record<string, unknown>> | undefined;
}

/** The JSON body of `POST /v1/messages`, without `stream`. */
export type AnthropicRequestBody = {
  model: string;
  max_tokens: number;
  messages: MessageParam[];
  system?: string;
  tools?: Tool[];
  tool_choice?: AnthropicToolChoice;
} & Record<string, unknown>;

/** What the response mapping needs to know about how the request was built. */
export interface RequestPlan {
  readonly body: AnthropicRequestBody;
  /**
   * Name of the tool that carries structured output (`responseFormat` through a forced tool), or
   * `undefined`. A `tool_use` of this tool is the answer, not a call to run.
   */
  readonly schemaTool: string | undefined;
}

const SCHEMA_TOOL_DESCRIPTION =
  "Give your final answer by calling this tool exactly once; its input is the answer and must match the schema.";

/**
 * Parses OpenAI-style raw JSON arguments into an Anthropic `tool_use` input object. Empty text is
 * a call without arguments (`{}`); text that is not a JSON object is kept verbatim under `_raw`,
 * so the transcript stays valid (every `tool_use` keeps its id and matches its `tool_result`) and
 * the model can still see what it sent.
 */
export function toToolInput(raw: string): Record<string, unknown> {
  if (raw.trim() === "") return {};
  try {
    const parsed: unknown = JSON.parse(raw);
    if (typeof parsed === "object" && parsed !== null && !Array.isArray(parsed)) {
      return parsed as Record<string, unknown>;
    }
  } catch {
    // Not JSON: fall through and keep the text.
  }
  return { _raw: raw };
}

/** Whether a tool result's JSON content reports a failure (`{"ok": false, ...}`). */
function isErrorResult(content: string): boolean {
  try {
    const parsed: unknown = JSON.parse(content);
    return (
      typeof parsed === "object" &&
      parsed !== null &&
      !Array.isArray(parsed) &&
      (parsed as Record<string, unknown>).ok === false
    );
  } catch {
    return false;
  }
}

function text(value: string): TextBlockParam {
  return { type: "text", text: value };
}

/** The Anthropic role and content blocks of one OpenAI-shaped message (system messages excluded). */
function toBlocks(message: Exclude<Message, { role: "system" }>): {
  role: "user" | "assistant";
  blocks: ContentBlockParam[];
} {
  switch (message.role) {
    case "user":
      // Anthropic rejects empty text blocks.
      return { role: "user", blocks: message.content === "" ? [] : [text(message.content)] };
    case "assistant": {
      // Thinking first: with extended thinking on, the API rejects a tool loop whose assistant
      // turn does not start with the thinking blocks it produced.
      const blocks: ContentBlockParam[] = fromReasoningItems(message.reasoning);
      if (message.content) blocks.push(text(message.content));
      for (const call of message.tool_calls ?? []) {
        const block: ToolUseBlockParam = {
          type: "tool_use",
          id: call.id,
          name: call.function.name,
          input: toToolInput(call.function.arguments),
        };
        blocks.push(block);
      }
      return { role: "assistant", blocks };
    }
    case "tool": {
      const block: ToolResultBlockParam = {
        type: "tool_result",
        tool_use_id: message.tool_call_id,
        content: message.content,
      };
      if (isErrorResult(message.content)) block.is_error = true;
      return { role: "user", blocks: [block] };
    }
  }
}

/**
 * Translates OpenAI-shaped messages to Anthropic's `system` + alternating `messages`.
 *
 * - Every system message, wherever it stands, joins the `system` field (blank line between).
 * - An assistant turn's Anthropic `reasoning` items go back first, as the `thinking` and
 *   `redacted_thinking` blocks they were; other providers' items are left out.
 * - `tool` messages become `tool_result` blocks of a user turn; consecutive turns of one role are
 *   merged into one, since Anthropic requires alternation.
 * - In a merged user turn, `tool_result` blocks come first (Anthropic requires them to open the
 *   turn that answers the tool calls); the order among the others is kept.
 * - A message with nothing to send (an empty user text, an assistant turn with neither text nor
 *   calls) is dropped.
 */
export function toAnthropicMessages(messages: readonly Message[]): {
  system: string | undefined;
  messages: MessageParam[];
} {
  const system: string[] = [];
  const turns: { role: "user" | "assistant"; blocks: ContentBlockParam[] }[] = [];
  for (const message of messages) {
    if (message.role === "system") {
      if (message.content !== "") system.push(message.content);
      continue;
    }
    const { role, blocks } = toBlocks(message);
    if (blocks.length === 0) continue;
    const last = turns[turns.length - 1];
    if (last && last.role === role) last.blocks.push(...blocks);
    else turns.push({ role, blocks });
  }
  return {
    system: system.length > 0 ? system.join("\n\n") : undefined,
    messages: turns.map(({ role, blocks }) => {
      if (role === "user" && blocks.some((b) => b.type === "tool_result")) {
        blocks = [
          ...blocks.filter((b) => b.type === "tool_result"),
          ...blocks.filter((b) => b.type !== "tool_result"),
        ];
      }
      // A lone text block goes as a plain string, the form most servers and logs expect.
      const only = blocks.length === 1 ? blocks[0] : undefined;
      return { role, content: only?.type === "text" ? only.text : blocks };
    }),
  };
}

function inputSchema(schema: JsonObject): Tool.InputSchema {
  return { ...schema, type: "object" } as Tool.InputSchema;
}

function badRequest(message: string, details: Record<string, unknown>): ProviderError {
  return new ProviderError("provider_bad_request", message, { retryable: false, details });
}

/**
 * Builds the body of `POST /v1/messages` from a normalized request and the provider's defaults,
 * and notes whether structured output travels through a forced tool.
 *
 * @throws ProviderError `provider_bad_request` when the request cannot be expressed (a schema
 * tool whose name clashes with one of the request's tools).
 */
export function toAnthropicRequest(request: ProviderRequest, defaults: RequestDefaults): RequestPlan {
  const model = request.model ?? defaults.model;
  const { system, messages } = toAnthropicMessages(request.messages);
  const body: AnthropicRequestBody = {
    model,
    max_tokens: request.maxTokens ?? defaults.maxTokens,
    messages,
  };
  if (system !== undefined) body.system = system;

  const temperature = request.temperature ?? defaults.temperature;
  if (temperature !== undefined) body.temperature = temperature;
  const topP = request.topP ?? defaults.topP;
  if (topP !== undefined) body.top_p = topP;
  const stop = request.stop ?? defaults.stop;
  if (stop !== undefined && stop.length > 0) body.stop_sequences = [...stop];

  const tools: Tool[] = (request.tools ?? []).map((spec) => {
    const tool: Tool = {
      name: spec.function.name,
      input_schema: inputSchema(spec.function.parameters),
    };
    if (spec.function.description !== undefined) tool.description = spec.function.description;
    if (spec.function.strict) tool.strict = true;
    return tool;
  });
  let toolChoice: AnthropicToolChoice | undefined;
  const choice = request.toolChoice;
  if (choice === "auto") toolChoice = { type: "auto" };
  else if (choice === "none") toolChoice = { type: "none" };
  else if (choice === "required") toolChoice = { type: "any" };
  else if (choice !== undefined) toolChoice = { type: "tool", name: choice.name };

  let schemaTool: string | undefined;
  const format = request.responseFormat;
  if (format !== undefined && format.type !== "text") {
    const schema: JsonObject = format.type === "json_schema" ? format.schema : { type: "object" };
    if (defaults.structuredOutput === "native") {
      body.output_config = { format: { type: "json_schema", schema } };
    } else {
      schemaTool = format.type === "json_schema" ? format.name : "json_object";
      if (tools.some((t) => t.name === schemaTool)) {
        throw badRequest(
          `The response format "${schemaTool}" travels to model "${model}" as a forced tool of that name, but the request already has a tool called "${schemaTool}". Rename the response format or the tool.`,
          { responseFormat: schemaTool, model },
        );
      }
      const tool: Tool = {
        name: schemaTool,
        description: SCHEMA_TOOL_DESCRIPTION,
        input_schema: inputSchema(schema),
      };
      if (format.type === "json_schema" && format.strict) tool.strict = true;
      // With no other tool (or tools switched off) the model must answer through the schema tool.
      // With other tools it must call some tool, and calling the schema tool is how it answers;
      // a tool the request forces by name stays forced.
      if (tools.length === 0 || choice === "none") toolChoice = { type: "tool", name: schemaTool };
      else if (typeof choice !== "object") toolChoice = { type: "any" };
      tools.push(tool);
    }
  }

  if (tools.length > 0) {
    body.tools = tools;
    if (request.parallelToolCalls === false) {
      const base = toolChoice ?? { type: "auto" };
      if (base.type !== "none") toolChoice = { ...base, disable_parallel_tool_use: true };
    }
    if (toolChoice !== undefined) body.tool_choice = toolChoice;
  }

  Object.assign(body, defaults.extra, request.extra);
  return { body, schemaTool };
}
