import { type RunOptions, type Session, Workflow } from "@openrath/core";
import { type CompiledPlan, compilePlan } from "./compile.js";
import { declaredNodes } from "./decorators.js";
import { runPlanInMemory } from "./run-in-memory.js";
import type { WorkflowDefinition } from "./types.js";

/**
 * A workflow whose steps and routers are methods marked with {@link step} and {@link router}
 * (standard TC39 decorators). Registered with a durable runtime, each run checkpoints at every
 * step boundary and survives crashes; called with `run()` like any `Workflow`, it walks the same
 * plan in memory (no store).
 *
 * Set `version` to tell revisions apart in the plan record; the plan hash changes with any
 * change to a step's code anyway.
 */
export abstract class DurableWorkflow extends Workflow {
  /** Declared revision of the workflow, recorded in its plan (default `"1"`). */
  version = "1";

  /** The definition the decorated methods declare. */
  definition(): WorkflowDefinition {
    return { name: this.name, version: this.version, nodes: declaredNodes(this) };
  }

  /** Compiles the decorated methods into a plan. @throws code `invalid_definition`. */
  compile(): CompiledPlan {
    return compilePlan(this.definition());
  }

  /** Runs the plan in memory, without durability: every step in order, routers choosing the way. */
  async forward(session: Session, options: RunOptions): Promise<Session> {
    return runPlanInMemory(this.compile(), session, options);
  }
}

/** Anything that defines a durable workflow: a {@link DurableWorkflow} instance or a definition. */
export type DurableDefinitionSource = DurableWorkflow | WorkflowDefinition;

/** The definition behind either form. */
export function definitionOf(source: DurableDefinitionSource): WorkflowDefinition {
  return source instanceof DurableWorkflow ? source.definition() : source;
}
