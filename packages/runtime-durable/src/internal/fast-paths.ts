import type { ClaimOnSubmitV1, GroupCommitV1, NewSessionSubmitV1 } from "../contract/fast-paths.js";
import type { RunStoreV1 } from "../contract/run-store.js";

/** The fast paths a store declares: each is its member when its capability is true, else absent. */
export interface FastPaths {
  readonly groupCommit?: GroupCommitV1;
  readonly newSessionSubmit?: NewSessionSubmitV1;
  readonly claimOnSubmit?: ClaimOnSubmitV1;
}

/** The fast paths of `store` the runtime may take (a member without its capability is not used). */
export function fastPathsOf(store: RunStoreV1): FastPaths {
  const { capabilities } = store;
  return {
    ...(capabilities.groupCommit === true && store.groupCommit ? { groupCommit: store.groupCommit } : {}),
    ...(capabilities.newSessionSubmit === true && store.newSessionSubmit
      ? { newSessionSubmit: store.newSessionSubmit }
      : {}),
    ...(capabilities.claimOnSubmit === true && store.claimOnSubmit
      ? { claimOnSubmit: store.claimOnSubmit }
      : {}),
  };
}
