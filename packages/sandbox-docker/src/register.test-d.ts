// Only the register entry is imported here; the package-shape check (tooling/scripts) is what
// guarantees it alone types the key for a consumer, since this package's program holds all of src.
import { type SandboxBackends, type SandboxKey, Session } from "@openrath/core";
import { expectTypeOf, test } from "vitest";
import "./register.js";

test("the register entry types the docker key and its spec", () => {
  expectTypeOf<"docker">().toExtend<SandboxKey>();
  expectTypeOf<NonNullable<SandboxBackends["docker"]>>().toHaveProperty("image");
  Session.fromUserMessage("x").to("docker", { image: "alpine:3" });
  // @ts-expect-error -- not a sandbox key
  Session.fromUserMessage("x").to("dokcer");
});
