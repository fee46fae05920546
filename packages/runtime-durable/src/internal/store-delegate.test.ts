import { describe, expect, it } from "vitest";
import type { RunStoreV1 } from "../contract/run-store.js";
import { StoreDelegate } from "./store-delegate.js";

/** Each plain method of the store and how many arguments it takes. */
const ARITY = {
  now: 0,
  registerPlan: 1,
  getPlan: 1,
  submit: 2,
  getRun: 2,
  listRuns: 1,
  claim: 1,
  reclaim: 1,
  heartbeat: 2,
  loadCheckpoint: 2,
  findSessionHead: 2,
  commitStep: 3,
  finish: 2,
  scheduleRetry: 2,
  release: 1,
  park: 2,
  unpark: 2,
  cancel: 2,
  appendEvent: 2,
  readEvents: 2,
  sweep: 0,
  setTenantLimit: 2,
  applyRetention: 1,
  eraseSession: 2,
  close: 0,
} as const;
const METHODS = Object.keys(ARITY) as (keyof typeof ARITY)[];

/** A store whose every method answers its own name and the arguments it got, on itself. */
function echoStore(extra: Partial<RunStoreV1> = {}) {
  const store: Record<string, unknown> = {
    specVersion: "v1",
    name: "echo",
    capabilities: { journal: false },
    signals: { name: "sig" },
    ...extra,
  };
  for (const method of METHODS) {
    store[method] = function (this: unknown, ...args: unknown[]) {
      return Promise.resolve({ method, args, self: this === store });
    };
  }
  return store as unknown as RunStoreV1;
}

describe("StoreDelegate", () => {
  it("hands every plain member to the wrapped store, with its arguments and on the store", async () => {
    const delegate = new StoreDelegate(echoStore()) as unknown as Record<
      string,
      (...a: unknown[]) => unknown
    >;
    const args = ["a", 2, "c"];
    for (const method of METHODS) {
      await expect(delegate[method]!(...args.slice(0, ARITY[method]))).resolves.toEqual({
        method,
        args: args.slice(0, ARITY[method]),
        self: true,
      });
    }
  });

  it("reads name, capabilities and signals from the wrapped store", () => {
    const store = echoStore();
    const delegate = new StoreDelegate(store);
    expect([delegate.name, delegate.capabilities, delegate.signals]).toEqual([
      "echo",
      store.capabilities,
      store.signals,
    ]);
  });

  it("has an optional member exactly when the wrapped store has it", async () => {
    const groupCommit = { specVersion: "v1" } as RunStoreV1["groupCommit"];
    const referencedArtifacts = async () => new Set(["d1"]);
    const schedules = { specVersion: "v1" } as RunStoreV1["schedules"];
    const webhooks = { specVersion: "v1" } as RunStoreV1["webhooks"];
    const stats = { specVersion: "v1" } as RunStoreV1["stats"];
    const withThem = new StoreDelegate(
      echoStore({ groupCommit, referencedArtifacts, schedules, webhooks, stats }),
    );
    expect(withThem.stats).toBe(stats);
    expect(withThem.groupCommit).toBe(groupCommit);
    expect(withThem.schedules).toBe(schedules);
    expect(withThem.webhooks).toBe(webhooks);
    await expect(withThem.referencedArtifacts!("t")).resolves.toEqual(new Set(["d1"]));
    const without = new StoreDelegate(echoStore());
    for (const key of [
      "groupCommit",
      "newSessionSubmit",
      "claimOnSubmit",
      "deployments",
      "journal",
      "access",
      "schedules",
      "webhooks",
      "messageQueue",
      "stats",
      "referencedArtifacts",
    ])
      expect(key in without).toBe(false);
  });
});
