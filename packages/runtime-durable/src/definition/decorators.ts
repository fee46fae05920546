import type { Session } from "@openrath/core";
import { DurableError } from "../contract/durable-error.js";
import type { StepContext } from "../contract/step-context.js";
import type { NodeDeclaration, RouterOptions, StepOptions } from "./types.js";

const DECLARATION = Symbol.for("openrath.durable.node");

type Marked = { [DECLARATION]?: { kind: "step" | "router"; options: StepOptions | RouterOptions } };

function mark(
  kind: "step" | "router",
  options: StepOptions | RouterOptions,
  method: unknown,
  name: string | symbol,
) {
  if (typeof name !== "string") {
    throw new DurableError(
      "invalid_definition",
      `@${kind} needs a string-named method, not ${String(name)}.`,
    );
  }
  const target = method as Marked;
  if (target[DECLARATION]) {
    throw new DurableError(
      "invalid_definition",
      `Method "${name}" is decorated twice (@${target[DECLARATION].kind} and @${kind}).`,
      {
        details: { method: name },
      },
    );
  }
  Object.defineProperty(target, DECLARATION, { value: { kind, options }, enumerable: false });
}

/**
 * Marks a method of a {@link DurableWorkflow} as a step (a standard TC39 method decorator). The
 * method gets the run's Session and a {@link StepContext} and returns the next Session.
 *
 * @example
 * ```ts
 * class Support extends DurableWorkflow {
 *   @step({ entry: true, next: "answer" })
 *   async triage(session: Session, ctx: StepContext) { return this.triager.run(session, ctx); }
 *   @step()
 *   async answer(session: Session, ctx: StepContext) { return this.writer.run(session, ctx); }
 * }
 * ```
 */
export function step(options: StepOptions = {}) {
  return <This>(
    method: (this: This, session: Session, context: StepContext) => Promise<Session> | Session,
    context: ClassMethodDecoratorContext<This>,
  ): void => {
    if (context.static || context.private) {
      throw new DurableError(
        "invalid_definition",
        `@step must decorate a public instance method; "${String(context.name)}" is not.`,
      );
    }
    mark("step", options, method, context.name);
  };
}

/**
 * Marks a method as a router: it returns the id of one of `successors`.
 *
 * @example
 * ```ts
 * @router({ successors: ["writer", "reviewer"] })
 * route(session: Session) { return session.text()?.includes("FAIL") ? "reviewer" : "writer"; }
 * ```
 */
export function router(options: RouterOptions) {
  return <This>(
    method: (this: This, session: Session, context: StepContext) => Promise<string> | string,
    context: ClassMethodDecoratorContext<This>,
  ): void => {
    if (context.static || context.private) {
      throw new DurableError(
        "invalid_definition",
        `@router must decorate a public instance method; "${String(context.name)}" is not.`,
      );
    }
    mark("router", options, method, context.name);
  };
}

/**
 * The nodes an instance's decorated methods declare, most-derived class first (an override
 * replaces the inherited node), with handlers bound to the instance.
 */
export function declaredNodes(instance: object): NodeDeclaration[] {
  const out: NodeDeclaration[] = [];
  const seen = new Set<string>();
  for (
    let proto = Object.getPrototypeOf(instance);
    proto && proto !== Object.prototype;
    proto = Object.getPrototypeOf(proto)
  ) {
    for (const name of Object.getOwnPropertyNames(proto)) {
      if (name === "constructor" || seen.has(name)) continue;
      const descriptor = Object.getOwnPropertyDescriptor(proto, name);
      const fn = descriptor?.value as (Marked & ((...args: never[]) => unknown)) | undefined;
      if (typeof fn !== "function") continue;
      seen.add(name);
      const declaration = fn[DECLARATION];
      if (!declaration) continue;
      const bound = fn.bind(instance) as never;
      // The plan hashes the method's own source, not the bound wrapper's.
      Object.defineProperty(bound, "toString", { value: () => fn.toString() });
      out.push(
        declaration.kind === "step"
          ? { kind: "step", id: name, handler: bound, options: declaration.options as StepOptions }
          : { kind: "router", id: name, handler: bound, options: declaration.options as RouterOptions },
      );
    }
  }
  return out;
}
