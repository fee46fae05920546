import type { GroupBase } from "./describe-group.js";

/** How a suite names itself and what its `reopen` option opens, for the error when it is missing. */
export interface ReopenHint {
  /** The suite's entry point, such as `describeMemoryConformance`. */
  readonly suite: string;
  /** The contract type `reopen` resolves to, such as `MemoryV1`. */
  readonly type: string;
  /** What `reopen` opens, such as `a second handle to the store`. */
  readonly handle: string;
}

/**
 * `open` and `reopen` of a group over stores: fresh stores from the context's `create`, further
 * handles from its `reopen`, each closed after the test. `reopen` throws, naming the claim that
 * needs it and the option to pass, when the caller gave no `reopen`.
 */
export function storeOpeners<T extends { close(): Promise<void> }>(
  base: GroupBase<T>,
  context: { readonly create: () => Promise<T>; readonly reopen: (() => Promise<T>) | undefined },
  hint: ReopenHint,
): { open(): Promise<T>; reopen(claim: string): Promise<T> } {
  return {
    open: async () => base.track(await context.create()),
    async reopen(claim) {
      if (context.reopen === undefined) {
        throw new Error(
          `capabilities.${claim} is true but ${hint.suite} got no reopen option. Pass reopen: () => Promise<${hint.type}> opening ${hint.handle} the latest create() made, or set ${claim} to false.`,
        );
      }
      return base.track(await context.reopen());
    },
  };
}
