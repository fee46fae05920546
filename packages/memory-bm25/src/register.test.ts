import { defaultRegistry } from "@openrath/core";
import { expect, it } from "vitest";

it("the register entry adds the bm25 key to the default registry", async () => {
  await import("./register.js");
  const backend = defaultRegistry().memory("bm25");
  expect(backend).toMatchObject({ kind: "memory", key: "bm25", specVersion: "v1" });
  expect(backend.capabilities).toEqual({ vectorSearch: false, persistence: true, sharedWriters: true });
});

it("the register entry also adds the same backend under local, so core needs no alias", async () => {
  await import("./register.js");
  const local = defaultRegistry().memory("local");
  expect(local).toMatchObject({ kind: "memory", key: "local", specVersion: "v1" });
  const memory = await local.open(undefined);
  await memory.remember({ text: "local is bm25" });
  expect((await memory.recall("bm25"))[0]?.entry.text).toBe("local is bm25");
  await memory.close();
});
