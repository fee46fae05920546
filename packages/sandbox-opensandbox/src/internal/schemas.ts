import * as z from "zod";
import { DEFAULT_IMAGE, type ResolvedOpenSandboxSpec } from "./spec.js";

const CODE_INTERPRETER_ENTRYPOINT = ["/opt/code-interpreter/code-interpreter.sh"];
const PLAIN_ENTRYPOINT = ["tail", "-f", "/dev/null"];
const DEFAULT_RESOURCES = { cpu: "1", memory: "2Gi" };

const positiveMs = z
  .number({ error: "it must be a positive number of milliseconds" })
  .positive("it must be a positive number of milliseconds");

/** The options of `openSandbox`, with their defaults. */
export const OpenSandboxOptionsSchema = z.strictObject({
  domain: z.string().min(1, 'it must be "host:port" or a URL').optional(),
  apiKey: z.string().optional(),
  protocol: z.enum(["http", "https"]).optional(),
  useServerProxy: z.boolean().default(false),
  readyTimeoutMs: positiveMs.default(120_000),
  requestTimeoutMs: positiveMs.default(30_000),
  execdAccessToken: z.string().optional(),
  network: z.enum(["none", "restricted", "open"]).default("none"),
});

const stringMap = (what: string) =>
  z.record(z.string(), z.string({ error: `${what} values must be strings` }), {
    error: "it must be an object of string values",
  });

/** A normalized absolute path: no `.` or `..` parts, no NUL, repeated and trailing `/` dropped. */
const workspace = z
  .string({ error: 'it must be an absolute path without "." or ".." parts, such as "/workspace"' })
  .refine(
    (path) =>
      path.startsWith("/") && !path.includes("\0") && !path.split("/").some((p) => p === "." || p === ".."),
    'it must be an absolute path without "." or ".." parts, such as "/workspace"',
  )
  .transform((path) => path.replace(/\/+/g, "/").replace(/\/$/, ""))
  .refine((path) => path !== "", "it must not be the root directory");

/**
 * The `opensandbox` spec, every default filled in: the entrypoint and the code interpreter follow
 * the image, the renewal period is half the timeout unless given (and always below it).
 */
export const OpenSandboxSpecSchema = z
  .strictObject(
    {
      image: z
        .string({ error: 'it must be a non-empty image reference such as "python:3.12"' })
        .refine(
          (image) => image.trim() !== "",
          'it must be a non-empty image reference such as "python:3.12"',
        )
        .default(DEFAULT_IMAGE),
      entrypoint: z
        .array(z.string().min(1, "entrypoint parts must be non-empty strings"), {
          error: "it must be a non-empty array of non-empty strings",
        })
        .min(1, "it must be a non-empty array of non-empty strings")
        .optional(),
      env: z
        .record(
          z.string().refine((name) => name !== "" && !/[=\0]/.test(name), "an invalid variable name"),
          z.string({ error: "env values must be strings" }),
          { error: "it must be an object of string values" },
        )
        .default({}),
      resourceLimits: stringMap("resourceLimits").default(DEFAULT_RESOURCES),
      timeoutSeconds: z
        .int({ error: "it must be a whole number of seconds, at least 60" })
        .min(60, "it must be a whole number of seconds, at least 60")
        .default(600),
      metadata: z
        .record(
          z
            .string()
            .refine(
              (key) => !key.startsWith("opensandbox.io/"),
              'the key prefix "opensandbox.io/" is reserved',
            ),
          z.string({ error: "metadata values must be strings" }),
          { error: "it must be an object of string values" },
        )
        .default({}),
      workspace: workspace.default("/workspace"),
      renewEverySeconds: z
        .number({ error: "it must be a positive number of seconds below timeoutSeconds" })
        .positive("it must be a positive number of seconds below timeoutSeconds")
        .optional(),
      codeInterpreter: z.boolean().optional(),
    },
    { error: 'it must be an object such as { image: "python:3.12" }, or undefined' },
  )
  .transform((spec, context): ResolvedOpenSandboxSpec => {
    const renewEverySeconds = spec.renewEverySeconds ?? spec.timeoutSeconds / 2;
    if (renewEverySeconds >= spec.timeoutSeconds) {
      context.addIssue({
        code: "custom",
        path: ["renewEverySeconds"],
        message: `it must be a positive number of seconds below timeoutSeconds (${spec.timeoutSeconds})`,
      });
      return z.NEVER;
    }
    const defaultImage = spec.image === DEFAULT_IMAGE;
    return {
      image: spec.image,
      entrypoint: [...(spec.entrypoint ?? (defaultImage ? CODE_INTERPRETER_ENTRYPOINT : PLAIN_ENTRYPOINT))],
      env: spec.env,
      resourceLimits: { ...spec.resourceLimits },
      timeoutSeconds: spec.timeoutSeconds,
      metadata: spec.metadata,
      workspace: spec.workspace,
      renewEverySeconds,
      codeInterpreter: spec.codeInterpreter ?? defaultImage,
    };
  });
