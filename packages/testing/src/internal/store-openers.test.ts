import { describe, expect, it } from "vitest";
import type { GroupBase } from "./describe-group.js";
import { storeOpeners } from "./store-openers.js";

interface Handle {
  readonly n: number;
  close(): Promise<void>;
}

function fakeBase(tracked: Handle[]): GroupBase<Handle> {
  return {
    test: () => {},
    skip: () => {},
    track(resource) {
      tracked.push(resource);
      return resource;
    },
  };
}

const handle = (n: number): Handle => ({ n, close: async () => {} });
const hint = { suite: "describeAcmeConformance", type: "AcmeV1", handle: "the store" };

describe("storeOpeners", () => {
  it("opens through create and reopens through reopen, tracking every handle to close", async () => {
    const tracked: Handle[] = [];
    const openers = storeOpeners(
      fakeBase(tracked),
      { create: async () => handle(1), reopen: async () => handle(2) },
      hint,
    );
    expect((await openers.open()).n).toBe(1);
    expect((await openers.reopen("persistence")).n).toBe(2);
    expect(tracked.map((h) => h.n)).toEqual([1, 2]);
  });

  it("without a reopen option, reopen fails naming the claim, the suite and the option to pass", async () => {
    const tracked: Handle[] = [];
    const openers = storeOpeners(
      fakeBase(tracked),
      { create: async () => handle(1), reopen: undefined },
      hint,
    );
    await expect(openers.reopen("sharedWriters")).rejects.toThrow(
      "capabilities.sharedWriters is true but describeAcmeConformance got no reopen option. Pass reopen: () => Promise<AcmeV1> opening the store the latest create() made, or set sharedWriters to false.",
    );
    expect(tracked).toEqual([]);
  });
});
