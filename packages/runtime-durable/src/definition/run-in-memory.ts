import { type RunOptions, Session } from "@openrath/core";
import { DurableError } from "../contract/durable-error.js";
import type { StepContext } from "../contract/step-context.js";
import type { CompiledPlan, PlanNode } from "./compile.js";

const quietLogger = { debug() {}, info() {}, warn() {}, error() {} };

/**
 * Walks a plan in memory: the non-durable execution of a durable workflow (what `run()` does).
 * Retries and hard timeouts are not applied here; the durable runtime applies them.
 */
export async function runPlanInMemory(
  plan: CompiledPlan,
  session: Session,
  options: RunOptions = {},
): Promise<Session> {
  const signal = options.signal ?? new AbortController().signal;
  let current = session;
  let id: string | null = plan.entry;
  while (id !== null) {
    signal.throwIfAborted();
    const node: PlanNode = plan.nodes.get(id)!;
    const context: StepContext = {
      signal,
      runId: "in-memory",
      stepId: id,
      attempt: 1,
      tenantId: "default",
      workerId: "in-memory",
      deadline: null,
      metadata: {},
      logger: quietLogger,
      fence: { runId: "in-memory", token: 0, workerId: "in-memory" },
      emit: async () => {},
      checkpointed: async () => {},
      emitLive: () => {},
      interrupt: async () => {
        throw new DurableError("not_supported", "Interrupts need the durable runtime with the step journal.");
      },
      extensions: {},
      ...(options.budget ? { budget: options.budget } : {}),
      ...(options.path ? { path: options.path } : {}),
      ...(options.onEvent ? { onEvent: options.onEvent } : {}),
    } as StepContext;
    if (node.kind === "router") {
      const chosen: string = await node.handler(current, context);
      if (!node.successors.includes(chosen)) throw invalidSuccessor(plan, node.id, chosen, node.successors);
      id = chosen;
    } else {
      const out: unknown = await node.handler(current, context);
      if (!(out instanceof Session)) throw notSession(plan, node.id, out);
      current = out;
      id = node.next;
    }
  }
  return current;
}

/** The error for a router that returned an undeclared successor. */
export function invalidSuccessor(
  plan: CompiledPlan,
  router: string,
  chosen: unknown,
  allowed: readonly string[],
): DurableError {
  return new DurableError(
    "router_invalid_successor",
    `Router "${router}" of workflow "${plan.name}" returned ${JSON.stringify(chosen)}; it declared ${allowed.map((s) => `"${s}"`).join(", ")}.`,
    { details: { router, chosen, allowed } },
  );
}

/** The error for a step that returned something other than a Session. */
export function notSession(plan: CompiledPlan, step: string, value: unknown): DurableError {
  const got =
    value === null
      ? "null"
      : typeof value === "object"
        ? (value.constructor?.name ?? "object")
        : typeof value;
  return new DurableError(
    "step_not_session",
    `Step "${step}" of workflow "${plan.name}" returned ${got}; a step must return a Session (return the input unchanged to keep it).`,
    { details: { step, got } },
  );
}
