import { type SandboxBackends, Session } from "@openrath/core";
import { expectTypeOf, test } from "vitest";
import type { OpenSandboxSpec } from "./index.js";

test("the opensandbox key takes an OpenSandboxSpec", () => {
  expectTypeOf<SandboxBackends["opensandbox"]>().toEqualTypeOf<OpenSandboxSpec | undefined>();
  expectTypeOf(Session.empty().to).toBeCallableWith("opensandbox", {
    image: "python:3.12",
    timeoutSeconds: 900,
  });
  expectTypeOf(Session.empty().to).toBeCallableWith("opensandbox");
  // @ts-expect-error a misspelt field does not compile
  expectTypeOf(Session.empty().to).toBeCallableWith("opensandbox", { imagee: "python:3.12" });
});
