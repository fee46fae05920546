import { type SandboxBackendV1, Session } from "@openrath/core";
import { expectTypeOf, test } from "vitest";
import { type LocalSandboxSpec, localSandbox } from "./index.js";

test("the local key takes a LocalSandboxSpec or nothing", () => {
  const session = Session.fromUserMessage("x");
  session.to("local", { workspace: "/w", isolation: "bubblewrap", timeoutMs: 1 });
  session.to("local", undefined);
  // @ts-expect-error -- isolation is "none" or "bubblewrap"
  session.to("local", { isolation: "docker" });
  // @ts-expect-error -- workspace is a string
  session.to("local", { workspace: 1 });
});

test("the factory returns a sandbox descriptor for that spec", () => {
  expectTypeOf(localSandbox()).toEqualTypeOf<SandboxBackendV1<LocalSandboxSpec | undefined>>();
  // @ts-expect-error -- unknown option
  localSandbox({ image: "x" });
});
