import { defaultRegistry } from "@openrath/core";
import { expect, it } from "vitest";

it("registers the openviking backend in the default registry through ./register", async () => {
  await import("./register.js");
  expect(defaultRegistry().has("memory", "openviking")).toBe(true);
  const backend = defaultRegistry().memory("openviking");
  expect(backend).toMatchObject({ kind: "memory", key: "openviking", specVersion: "v1" });
  expect(backend.capabilities).toEqual({ vectorSearch: false, persistence: true, sharedWriters: true });
});
