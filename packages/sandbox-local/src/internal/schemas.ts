import { resolve } from "node:path";
import * as z from "zod";
import type { LocalIsolation, LocalSandboxSpec } from "../local-sandbox.js";

const isolation = z.enum(["none", "bubblewrap"], { error: 'use "none" or "bubblewrap"' });

/** The options of `localSandbox`, with their defaults. */
export const LocalSandboxOptionsSchema = z.strictObject({
  isolation: isolation.default("none"),
  bwrapPath: z
    .string({ error: "use the path or name of the bubblewrap executable" })
    .min(1, "use the path or name of the bubblewrap executable")
    .refine((path) => !path.includes("\0"), "a path has no NUL byte")
    .default("bwrap"),
  maxOutputBytes: z.int({ error: "use a whole number of bytes, at least 0" }).min(0).optional(),
});

/** Environment variables: names without `=` or NUL, values without NUL. */
export const EnvSchema = z.record(
  z
    .string()
    .refine(
      (name) => name !== "" && !/[=\0]/.test(name),
      "a variable name must be non-empty without '=' or NUL",
    ),
  z
    .string()
    .refine((value) => !value.includes("\0"), "a variable's value must be a string without NUL bytes"),
  { error: 'use an object of string values such as { LANG: "C.UTF-8" }' },
);

/**
 * The `local` sandbox spec of a backend whose isolation is `defaultIsolation`: unknown fields are
 * refused (a misspelt `workdir` would otherwise silently give a temporary workspace), the
 * workspace becomes absolute, and the isolation may be tightened, never loosened.
 */
export function localSandboxSpecSchema(defaultIsolation: LocalIsolation) {
  return z
    .strictObject(
      {
        workspace: z
          .string()
          .min(1, "use a directory path (it is created when missing)")
          .refine((path) => !path.includes("\0"), "a path has no NUL byte")
          .transform((path) => resolve(path))
          .optional(),
        env: EnvSchema.optional(),
        isolation: isolation.default(defaultIsolation),
        inheritEnv: z.boolean().optional(),
        timeoutMs: z
          .number({ error: "use a positive number of milliseconds, or leave it out for no timeout" })
          .positive("use a positive number of milliseconds, or leave it out for no timeout")
          .optional(),
      },
      { error: 'it must be an object such as { workspace: "./work" }, or undefined' },
    )
    .refine((spec) => !(defaultIsolation === "bubblewrap" && spec.isolation === "none"), {
      path: ["isolation"],
      message:
        'this backend was created with localSandbox({ isolation: "bubblewrap" }) and its capabilities promise no network; a spec may tighten isolation, never loosen it. Drop the field, or register localSandbox() for unisolated sandboxes',
    }) satisfies z.ZodType<LocalSandboxSpec>;
}
