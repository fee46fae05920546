import type { DeploymentsV1 } from "../contract/deployments.js";
import { DurableError } from "../contract/durable-error.js";
import type { RunStoreV1 } from "../contract/run-store.js";
import type { CompiledPlan } from "../definition/compile.js";
import { checkIdentifier } from "./validate.js";

const HASH = /^[0-9a-f]{64}$/;
/** How long a name resolved through the store is reused: a deploy elsewhere is seen within this. */
const RESOLVED_MS = 1000;

/**
 * Which plan a submission starts: the plans one runtime registered, and workflow names resolved
 * through the store's deployments (remembered for a second), else among the registered ones.
 */
export class WorkflowNames {
  private readonly byHash = new Map<string, CompiledPlan>();
  private readonly byName = new Map<string, CompiledPlan>();
  /** Names resolved through the store's deployments, and when (`performance.now()`). */
  private readonly resolved = new Map<string, { readonly hash: string; readonly at: number }>();

  constructor(private readonly store: RunStoreV1) {}

  /** The plans registered here, newest registration of each name last. */
  get plans(): CompiledPlan[] {
    return [...this.byHash.values()];
  }

  /** A plan registered here, by hash. */
  plan(hash: string): CompiledPlan | undefined {
    return this.byHash.get(hash);
  }

  add(plan: CompiledPlan): void {
    this.byHash.set(plan.hash, plan);
    this.byName.set(plan.name, plan);
  }

  /** Remembers that `name` now starts the plan `hash` (a deploy made here). */
  deployed(name: string, hash: string): void {
    this.resolved.set(name, { hash, at: performance.now() });
  }

  /** The store's deployments, when it resolves names. */
  get deployments(): DeploymentsV1 | undefined {
    return this.store.capabilities.deployments ? this.store.deployments : undefined;
  }

  /** @throws {DurableError} `not_supported` on a store without `capabilities.deployments`. */
  requireDeployments(): DeploymentsV1 {
    const deployments = this.deployments;
    if (!deployments)
      throw new DurableError(
        "not_supported",
        `The ${this.store.name} store does not resolve workflow names (capabilities.deployments is false).`,
      );
    return deployments;
  }

  /**
   * The plan hash a submission of `workflow` starts: a plan, a plan hash, or a name.
   *
   * @throws {DurableError} `unknown_plan` for a name neither deployed nor registered here.
   */
  async hashOf(workflow: string | CompiledPlan): Promise<string> {
    if (typeof workflow !== "string") return workflow.hash;
    if (HASH.test(workflow)) return workflow;
    const deployments = this.deployments;
    if (deployments) {
      checkIdentifier("workflow", workflow, 256);
      const known = this.resolved.get(workflow);
      if (known && performance.now() - known.at < RESOLVED_MS) return known.hash;
      const deployment = await deployments.current(workflow);
      if (deployment) {
        this.deployed(workflow, deployment.hash);
        return deployment.hash;
      }
    }
    const local = this.byName.get(workflow)?.hash;
    if (local !== undefined) return local;
    throw new DurableError(
      "unknown_plan",
      deployments
        ? `No workflow named ${JSON.stringify(workflow)} is deployed in the ${this.store.name} store.`
        : `No workflow named ${JSON.stringify(workflow)} is registered in this runtime; registered: ${[...this.byName.keys()].join(", ") || "none"}.`,
      { details: { workflow } },
    );
  }

  /**
   * The entry step of a plan the store holds (one registered here needs no read: {@link plan}).
   *
   * @throws {DurableError} `unknown_plan` when the store has no such plan.
   */
  async storedEntry(planHash: string): Promise<string> {
    const plan = await this.store.getPlan(planHash);
    if (!plan) {
      throw new DurableError("unknown_plan", `No plan ${planHash} is registered in the store.`, {
        details: { planHash },
      });
    }
    return String(plan.definition.entry);
  }
}
