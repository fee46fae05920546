/** One revision of a workflow: a registered plan, as `DeploymentsV1.revisions` lists it. */
export interface PlanRevision {
  readonly hash: string;
  readonly name: string;
  readonly version: string;
  /** When the plan was first registered (epoch milliseconds). */
  readonly registeredAt: number;
  /** Whether the name points at this revision now. */
  readonly deployed: boolean;
}

/** Where a workflow name points: the revision `submit(name)` starts. */
export interface Deployment {
  readonly name: string;
  /** The plan hash the name points at. */
  readonly hash: string;
  readonly version: string;
  /** When the name was pointed here (epoch milliseconds). */
  readonly deployedAt: number;
  /** The hash the name pointed at before (`null` for the first deployment). */
  readonly previous: string | null;
}

/**
 * Workflow names resolved through the store, version 1 (`store.deployments` when
 * `capabilities.deployments` is true): each name points at one registered revision, which is
 * what a producer that only submits starts by name, without the workflow's code. Several
 * revisions stay executable at once (runs pin their plan hash); a deploy moves the pointer while
 * runs of the old revision finish.
 *
 * Errors are `DurableError`s: `unknown_plan`, `invalid_argument`.
 */
export interface DeploymentsV1 {
  readonly specVersion: "v1";
  /**
   * Points the plan's name at the plan `hash` (registered before). With `ifNewer`, only when the
   * name points nowhere yet or at a revision registered no later than this one (so a restarted
   * process of an older release does not move a newer deployment back).
   *
   * @returns the deployment after the call, and whether this call moved it.
   * @throws `unknown_plan` when no plan has that hash.
   */
  deploy(
    hash: string,
    options?: { readonly ifNewer?: boolean },
  ): Promise<{ readonly deployment: Deployment; readonly moved: boolean }>;
  /** Where `name` points, or `undefined` when it was never deployed. */
  current(name: string): Promise<Deployment | undefined>;
  /** The registered revisions of `name`, newest first (at most 1000). */
  revisions(name: string): Promise<PlanRevision[]>;
}
