import type {
  ExecResult,
  MemoryEntry,
  MemoryHit,
  ObservedWork,
  ProviderResponse,
  Route,
  ToolOutcome,
} from "@openrath/core";
import { Session } from "@openrath/core";
import { type Attributes, type Span, SpanKind, SpanStatusCode } from "@opentelemetry/api";
import { ERROR_TYPE, GEN_AI, OPENRATH } from "./attributes.js";

/** How a piece of work starts as a span: its name, kind and first attributes. */
export interface SpanStart {
  readonly name: string;
  readonly kind: SpanKind;
  readonly attributes: Attributes;
}

/**
 * The name, kind and attributes of the span of `work`, with `base`'s attributes under its own.
 * Each case builds one object literal: this runs for every observed call even with no SDK
 * registered, and spreading into a literal is several times slower on Node 20 than writing it out.
 */
export function startOf(work: ObservedWork, captureContent: boolean, base?: Attributes): SpanStart {
  const start = spanStart(work, captureContent);
  if (base) for (const key in base) if (!(key in start.attributes)) start.attributes[key] = base[key];
  return start;
}

function spanStart(work: ObservedWork, captureContent: boolean): SpanStart {
  const sessionId = work.session.id;
  const nodeId = work.session.lineage.id;
  switch (work.kind) {
    case "agent":
      return {
        name: `invoke_agent ${work.name}`,
        kind: SpanKind.INTERNAL,
        attributes: {
          [OPENRATH.sessionId]: sessionId,
          [OPENRATH.lineageNodeId]: nodeId,
          [GEN_AI.operationName]: "invoke_agent",
          [GEN_AI.agentName]: work.name,
          [OPENRATH.path]: work.path,
        },
      };
    case "workflow":
      return {
        name: `workflow ${work.name}`,
        kind: SpanKind.INTERNAL,
        attributes: {
          [OPENRATH.sessionId]: sessionId,
          [OPENRATH.lineageNodeId]: nodeId,
          [OPENRATH.workflow]: work.name,
          [OPENRATH.path]: work.path,
        },
      };
    case "model": {
      const { call, provider } = work;
      const model = call.request.model ?? provider.model;
      const attributes: Attributes = {
        [OPENRATH.sessionId]: sessionId,
        [OPENRATH.lineageNodeId]: nodeId,
        [GEN_AI.operationName]: "chat",
        [GEN_AI.providerName]: provider.name,
        [GEN_AI.requestModel]: model,
        [GEN_AI.agentName]: call.by,
        [OPENRATH.caller]: work.step,
        [OPENRATH.branch]: call.position.label,
      };
      if (call.request.maxTokens !== undefined) attributes[GEN_AI.requestMaxTokens] = call.request.maxTokens;
      if (call.request.temperature !== undefined)
        attributes[GEN_AI.requestTemperature] = call.request.temperature;
      // A replay provider answers from a recorded session: no vendor request is made.
      if (provider.name === "replay") attributes[OPENRATH.replayed] = "replay";
      if (captureContent) attributes[GEN_AI.inputMessages] = JSON.stringify(call.request.messages);
      return { name: `chat ${model}`, kind: SpanKind.CLIENT, attributes };
    }
    case "tool": {
      const { dispatch } = work;
      const attributes: Attributes = {
        [OPENRATH.sessionId]: sessionId,
        [OPENRATH.lineageNodeId]: nodeId,
        [GEN_AI.operationName]: "execute_tool",
        [GEN_AI.toolName]: dispatch.tool.name,
        [GEN_AI.toolCallId]: dispatch.call.id,
        [GEN_AI.toolType]: "function",
        [GEN_AI.agentName]: dispatch.by,
        [OPENRATH.toolEffect]: dispatch.tool.effect ?? "non_idempotent",
      };
      if (dispatch.tool.description) attributes[GEN_AI.toolDescription] = dispatch.tool.description;
      if (captureContent) attributes[GEN_AI.toolArguments] = dispatch.call.function.arguments;
      return { name: `execute_tool ${dispatch.tool.name}`, kind: SpanKind.INTERNAL, attributes };
    }
    case "sandbox.exec": {
      const program = Array.isArray(work.command)
        ? String(work.command[0] ?? "")
        : String(work.command).trim().split(/\s+/)[0]!;
      const attributes: Attributes = {
        [OPENRATH.sessionId]: sessionId,
        [OPENRATH.lineageNodeId]: nodeId,
        [OPENRATH.sandboxId]: work.sandboxId,
        [OPENRATH.sandboxMethod]: work.method,
        // The program only: arguments may carry secrets or user content.
        "process.executable.name": work.method === "runCode" ? `runCode:${program}` : program,
      };
      if (captureContent && work.method === "exec")
        attributes["process.command_line"] = Array.isArray(work.command)
          ? work.command.join(" ")
          : String(work.command);
      return { name: "sandbox.exec", kind: SpanKind.INTERNAL, attributes };
    }
    case "memory.recall":
      return {
        name: `memory.recall ${work.agent}`,
        kind: SpanKind.INTERNAL,
        attributes: captureContent
          ? {
              [OPENRATH.sessionId]: sessionId,
              [OPENRATH.lineageNodeId]: nodeId,
              [GEN_AI.agentName]: work.agent,
              [OPENRATH.memoryQuery]: work.query,
            }
          : {
              [OPENRATH.sessionId]: sessionId,
              [OPENRATH.lineageNodeId]: nodeId,
              [GEN_AI.agentName]: work.agent,
            },
      };
    case "memory.commit":
      return {
        name: `memory.commit ${work.agent}`,
        kind: SpanKind.INTERNAL,
        attributes: {
          [OPENRATH.sessionId]: sessionId,
          [OPENRATH.lineageNodeId]: nodeId,
          [GEN_AI.agentName]: work.agent,
        },
      };
    case "select":
      return {
        name: `select ${work.selector}`,
        kind: SpanKind.INTERNAL,
        attributes: {
          [OPENRATH.sessionId]: sessionId,
          [OPENRATH.lineageNodeId]: nodeId,
          [OPENRATH.selectorCandidates]: [...work.candidates],
        },
      };
  }
}

/** Adds what the work's result tells to its span (the span is still open). */
export function finishWith(
  span: Span,
  work: ObservedWork,
  result: unknown,
  replayed: boolean,
  captureContent: boolean,
): void {
  switch (work.kind) {
    case "agent":
    case "workflow":
      if (result instanceof Session) span.setAttribute(OPENRATH.lineageNodeId, result.lineage.id);
      return;
    case "model": {
      const response = result as ProviderResponse;
      span.setAttribute(GEN_AI.responseModel, response.model);
      span.setAttribute(GEN_AI.responseFinishReasons, [response.finishReason]);
      // Tokens a replayed call spent were spent by the recorded call, not by this one.
      if (response.usage && !replayed) {
        span.setAttribute(GEN_AI.inputTokens, response.usage.promptTokens);
        span.setAttribute(GEN_AI.outputTokens, response.usage.completionTokens);
      }
      if (captureContent)
        span.setAttribute(
          GEN_AI.outputMessages,
          JSON.stringify([
            {
              role: "assistant",
              content: response.content,
              ...(response.toolCalls.length > 0 ? { tool_calls: response.toolCalls } : {}),
              finish_reason: response.finishReason,
            },
          ]),
        );
      return;
    }
    case "tool": {
      const outcome = result as ToolOutcome;
      if (captureContent) span.setAttribute(GEN_AI.toolResult, outcome.content);
      if (outcome.isError) {
        span.setAttribute(ERROR_TYPE, "tool_error");
        span.setStatus({ code: SpanStatusCode.ERROR, message: "the tool returned an error result" });
      }
      return;
    }
    case "sandbox.exec": {
      const exec = result as ExecResult;
      span.setAttribute("process.exit.code", exec.exitCode);
      if (exec.exitCode !== 0) span.setAttribute(ERROR_TYPE, String(exec.exitCode));
      return;
    }
    case "memory.recall":
      span.setAttribute(OPENRATH.memoryHits, (result as readonly MemoryHit[]).length);
      return;
    case "memory.commit":
      span.setAttribute(OPENRATH.memoryEntries, (result as readonly MemoryEntry[]).length);
      return;
    case "select": {
      const route = result as Route;
      span.setAttribute(OPENRATH.selectorIndex, route.index);
      if (route.index >= 0) span.setAttribute(OPENRATH.selectorChosen, work.candidates[route.index]!);
      span.setAttribute(OPENRATH.lineageNodeId, route.session.lineage.id);
      return;
    }
  }
}

/** Records a thrown error on a span: its status, `error.type` (the coded error's code) and the exception. */
export function failWith(span: Span, error: unknown): void {
  const code = (error as { code?: unknown })?.code;
  span.setAttribute(ERROR_TYPE, typeof code === "string" ? code : ((error as Error)?.name ?? "Error"));
  span.recordException(error instanceof Error ? error : String(error));
  span.setStatus({ code: SpanStatusCode.ERROR, message: (error as Error)?.message ?? String(error) });
}
