// Only the register entry is imported here; the package-shape check (tooling/scripts) is what
// guarantees it alone types the key for a consumer, since this package's program holds all of src.
import { type SandboxBackends, type SandboxKey, Session } from "@openrath/core";
import { expectTypeOf, test } from "vitest";
import type { OpenSandboxSpec } from "./register.js";
import "./register.js";

test("the register entry types the opensandbox key and its spec", () => {
  expectTypeOf<"opensandbox">().toExtend<SandboxKey>();
  expectTypeOf<SandboxBackends["opensandbox"]>().toEqualTypeOf<OpenSandboxSpec | undefined>();
  Session.fromUserMessage("x").to("opensandbox", { timeoutSeconds: 900 });
  // @ts-expect-error -- a misspelt field does not compile
  Session.fromUserMessage("x").to("opensandbox", { imagee: "python:3.12" });
});
