import { defaultRegistry } from "@openrath/core";
import { expect, it } from "vitest";

it("the register entry adds the bm25 key to the default registry", async () => {
  await import("./register.js");
  const backend = defaultRegistry().memory("bm25");
  expect(backend).toMatchObject({ kind: "memory", key: "bm25", specVersion: "v1" });
  expect(backend.capabilities).toEqual({ vectorSearch: false, persistence: true, sharedWriters: true });
});
