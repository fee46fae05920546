import type { SandboxBackendV1 } from "@openrath/core";
import { expect } from "vitest";
import { defineGroup } from "./internal/define-group.js";
import { expectSandboxError } from "./internal/expect-sandbox-error.js";
import type { SandboxSuiteContext } from "./suite-context.js";

/**
 * The descriptor: the shape every sandbox backend shares (`kind`, a lower-case kebab `key`,
 * `specVersion: "v1"`, the manifest it was given), and coded `invalid_spec` errors for each of the
 * invalid specs the caller lists, from `parseSpec` (synchronously, as placement calls it) and from
 * `open` (as a rejection).
 */
export function descriptorSuite(
  context: SandboxSuiteContext,
  backend: SandboxBackendV1,
  invalidSpecs: readonly unknown[],
): void {
  defineGroup(context, "descriptor", (group) => {
    group.test("is a v1 sandbox descriptor with a kebab-case key and the manifest under test", async () => {
      expect(backend.kind).toBe("sandbox");
      expect(backend.specVersion).toBe("v1");
      expect(backend.key).toMatch(/^[a-z][a-z0-9]*(-[a-z0-9]+)*$/);
      expect(backend.capabilities).toEqual(context.capabilities);
      expect(typeof backend.open).toBe("function");
    });

    group.test("lists at least one invalid spec to check", async () => {
      expect(invalidSpecs.length, "pass invalidSpecs: specs the backend must refuse").toBeGreaterThan(0);
    });

    group.test("refuses every invalid spec with a coded invalid_spec SandboxError", async () => {
      for (const spec of invalidSpecs) {
        const shown = JSON.stringify(spec) ?? String(spec);
        if (backend.parseSpec) {
          let thrown: unknown;
          try {
            backend.parseSpec(spec);
          } catch (error) {
            thrown = error;
          }
          expect(thrown, `parseSpec(${shown}) accepted it`).toBeDefined();
          expect((thrown as Error).name, `parseSpec(${shown})`).toBe("SandboxError");
          expect((thrown as { code?: string }).code, `parseSpec(${shown})`).toBe("invalid_spec");
          expect((thrown as Error).message.length).toBeGreaterThan(20);
        }
        const error = await expectSandboxError(
          () => backend.open(spec as never),
          "invalid_spec",
          `open(${shown})`,
        );
        expect(error.name).toBe("SandboxError");
      }
    });
  });
}
