// Only the register entry is imported here; the package-shape check (tooling/scripts) is what
// guarantees it alone types the key for a consumer, since this package's program holds all of src.
import { type SandboxBackends, type SandboxKey, Session } from "@openrath/core";
import { expectTypeOf, test } from "vitest";
import type { LocalSandboxSpec } from "./register.js";
import "./register.js";

test("the register entry types the local key and its spec", () => {
  expectTypeOf<"local">().toExtend<SandboxKey>();
  expectTypeOf<SandboxBackends["local"]>().toEqualTypeOf<LocalSandboxSpec | undefined>();
  Session.fromUserMessage("x").to("local", { workspace: "/w" });
  // @ts-expect-error -- not a sandbox key
  Session.fromUserMessage("x").to("locale");
});
