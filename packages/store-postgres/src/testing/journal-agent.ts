import {
  Agent,
  type Chunk,
  defineTool,
  type JsonValue,
  type ProviderRequest,
  type ProviderV1,
  ScriptedProvider,
  type ScriptedTurn,
  type Session,
} from "@openrath/core";
import { defineWorkflow, type WorkflowBuilder } from "@openrath/runtime-durable";

/** Hooks the journal tests observe the agent through: live provider calls and tool executions. */
export interface AgentProbe {
  /** A live provider call for `turn` (1-based) is starting. */
  onModel?(turn: number): void | Promise<void>;
  /** A tool runs (`name`, the turn that called it). */
  onTool?(name: string, turn: number, key: string | undefined): void | Promise<void>;
  /** How long a provider call takes (ms), so a kill can land inside it. */
  readonly modelDelayMs?: number;
  /** How long a tool takes (ms). */
  readonly toolDelayMs?: number;
}

/** Turns of the reference agent: nine with two tool calls each, then the answer. */
export const TURNS = 10;

const sleep = (ms: number) => (ms > 0 ? new Promise((r) => setTimeout(r, ms)) : Promise.resolve());

/**
 * The reference agent of the journal tests: ten model turns; turns 1–9 each call a read-only
 * `lookup` and an idempotent keyed `record`, turn 10 answers. The scripted provider answers by the
 * request (how many tool results it holds), not by a call counter, so a resumed process answers
 * the same way; tool-call ids are explicit for the same reason.
 */
export function referenceAgent(probe: AgentProbe = {}): Agent {
  const lookup = defineTool<{ k: number }>({
    name: "lookup",
    description: "Look a value up",
    parameters: { type: "object", properties: { k: { type: "number" } }, required: ["k"] },
    effect: "read_only",
    parallel: true,
    execute: async ({ k }) => {
      await probe.onTool?.("lookup", k, undefined);
      await sleep(probe.toolDelayMs ?? 0);
      return { k, value: (k * 7919) % 1000 };
    },
  });
  const record = defineTool<{ k: number; note: string }>({
    name: "record",
    description: "Record a note (idempotent by its key)",
    parameters: {
      type: "object",
      properties: { k: { type: "number" }, note: { type: "string" } },
      required: ["k", "note"],
    },
    effect: "idempotent",
    idempotencyKey: (args) => `note-${args.k}`,
    parallel: true,
    execute: async ({ k, note }, ctx) => {
      await probe.onTool?.("record", k, ctx.idempotencyKey);
      await sleep(probe.toolDelayMs ?? 0);
      return { stored: ctx.idempotencyKey ?? null, note };
    },
  });
  const turnOf = (request: ProviderRequest) =>
    request.messages.filter((m) => m.role === "tool").length / 2 + 1;
  const scripted = new ScriptedProvider((request): ScriptedTurn => {
    const turn = turnOf(request);
    if (turn >= TURNS) return { text: `done after ${turn - 1} rounds`, delayMs: probe.modelDelayMs ?? 0 };
    return {
      toolCalls: [
        { name: "lookup", arguments: { k: turn }, id: `call_${turn}_lookup` },
        { name: "record", arguments: { k: turn, note: `turn ${turn}` }, id: `call_${turn}_record` },
      ],
      delayMs: probe.modelDelayMs ?? 0,
    };
  });
  const provider: ProviderV1 = {
    specVersion: "v1",
    name: scripted.name,
    model: scripted.model,
    async complete(request, options) {
      await probe.onModel?.(turnOf(request));
      return scripted.complete(request, options);
    },
  };
  return new Agent({
    name: "researcher",
    instructions: "Work in ten turns.",
    provider,
    tools: [lookup, record],
    maxTurns: 12,
  });
}

/** A one-step durable workflow running the reference agent on the run's session. */
export function referenceWorkflow(probe: AgentProbe = {}, name = "journaled-agent"): WorkflowBuilder {
  const agent = referenceAgent(probe);
  return defineWorkflow(name).step("agent", (session, ctx) => agent.run(session, ctx), { entry: true });
}

/**
 * A session's content without what differs between any two runs of the same program (chunk ids,
 * times, session ids): what "the same final Session" means across a crash.
 */
export function transcript(session: Session): JsonValue[] {
  return session.chunks.map((chunk: Chunk) => {
    const {
      id: _id,
      createdAt: _at,
      sessionId: _session,
      ...rest
    } = chunk as Chunk & Record<string, unknown>;
    return JSON.parse(JSON.stringify(rest)) as JsonValue;
  });
}
