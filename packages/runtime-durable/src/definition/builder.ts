import type {
  NodeDeclaration,
  RouterHandler,
  RouterOptions,
  StepHandler,
  StepOptions,
  WorkflowDefinition,
} from "./types.js";

/**
 * The functional form of a durable workflow, for code without classes. It compiles to the same
 * plan as the decorator form.
 *
 * @example
 * ```ts
 * const support = defineWorkflow("support")
 *   .step("triage", (s, ctx) => triager.run(s, ctx), { entry: true, next: "route" })
 *   .router("route", (s) => (s.text()?.includes("refund") ? "refunds" : "answer"), { successors: ["refunds", "answer"] })
 *   .step("refunds", (s, ctx) => refunds.run(s, ctx))
 *   .step("answer", (s, ctx) => writer.run(s, ctx));
 * runtime.register(support);
 * ```
 */
export class WorkflowBuilder implements WorkflowDefinition {
  readonly nodes: NodeDeclaration[] = [];

  constructor(
    readonly name: string,
    readonly version = "1",
  ) {}

  /** Adds a step. */
  step(id: string, handler: StepHandler, options: StepOptions = {}): this {
    this.nodes.push({ kind: "step", id, handler, options });
    return this;
  }

  /** Adds a router that returns one of `options.successors`. */
  router(id: string, handler: RouterHandler, options: RouterOptions): this {
    this.nodes.push({ kind: "router", id, handler, options });
    return this;
  }
}

/** Starts a functional workflow definition named `name` (its `version` defaults to `"1"`). */
export function defineWorkflow(name: string, options: { version?: string } = {}): WorkflowBuilder {
  return new WorkflowBuilder(name, options.version ?? "1");
}
