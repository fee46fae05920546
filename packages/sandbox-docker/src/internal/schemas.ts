import { checkTimeout } from "@openrath/core/backend";
import * as z from "zod";
import type { DockerSandboxSpec } from "../docker-sandbox-spec.js";
import { RESERVED_LABEL_PREFIX } from "./labels.js";
import { LANGUAGES } from "./languages.js";

/** Default workspace path inside the container. */
export const DEFAULT_WORKSPACE = "/workspace";
/** Default `pidsLimit`. */
export const DEFAULT_PIDS_LIMIT = 256;
/** Default `cpus`: one core. */
export const DEFAULT_CPUS = 1;
/** Default `memoryBytes`: 1 GiB, swap included (so no swap). */
export const DEFAULT_MEMORY_BYTES = 1024 * 1024 * 1024;
/** Docker refuses memory limits under 6 MiB. */
const MIN_MEMORY_BYTES = 6 * 1024 * 1024;
/** Room for the keep-alive loop, the sandbox's own helper commands and at least one user command. */
const MIN_PIDS_LIMIT = 8;

const SUPPORTED = Object.keys(LANGUAGES);

/** The options of `dockerSandbox`, with their defaults (`languages` deduplicated). */
export const DockerSandboxOptionsSchema = z.strictObject({
  // A Dockerode instance or its options: Dockerode checks them itself.
  docker: z.custom<object>((value) => typeof value === "object" && value !== null).optional(),
  defaultImage: z.string().min(1, "it must be a non-empty image reference").optional(),
  labels: z
    .record(
      z
        .string()
        .refine(
          (key) => key !== "" && !key.startsWith(RESERVED_LABEL_PREFIX),
          `label keys must be non-empty and not start with "${RESERVED_LABEL_PREFIX}" (reserved)`,
        ),
      z.string({ error: "label values must be strings" }),
    )
    .default({}),
  languages: z
    .array(
      z.string().refine((language) => Object.hasOwn(LANGUAGES, language), {
        error: `this backend cannot run it; supported: ${SUPPORTED.join(", ")}`,
      }),
    )
    .min(1, 'it must be a non-empty array, such as ["sh", "python"]')
    .default(["sh"])
    .transform((languages) => [...new Set(languages)]),
});

const envSchema = z.record(
  z
    .string()
    .refine(
      (name) => name !== "" && !/[=\0]/.test(name),
      "variable names must be non-empty, without '=' or NUL",
    ),
  z.string().refine((value) => !value.includes("\0"), "values must be strings without NUL bytes"),
  { error: 'it must be an object of string values, such as { LANG: "C.UTF-8" }' },
);

/** A normalized absolute path other than `/`: no `.`, `..` or empty parts, no control characters. */
function isWorkspacePath(value: string): boolean {
  const parts = value.split("/").slice(1);
  return (
    value.startsWith("/") &&
    ![...value].some((char) => char.charCodeAt(0) < 0x20) &&
    value.replace(/\/+$/, "") !== "" &&
    !parts.some((part, i) => part === "." || part === ".." || (part === "" && i < parts.length - 1))
  );
}

const NO_TIMEOUT = "it must be a positive number of milliseconds, or null (or Infinity) for no timeout";
const IMAGE = "it must be a non-empty image reference without spaces, such as python:3.12-slim";

const integerAtLeast = (min: number, what: string) =>
  z
    .int({ error: `it must be an integer of at least ${min}${what}` })
    .min(min, `it must be an integer of at least ${min}${what}`);

/**
 * The `docker` sandbox spec of a backend whose default image is `defaultImage`, with the safe
 * defaults filled in: one CPU, 1 GiB without swap, 256 processes, no network. A timeout of `null`
 * or `Infinity` is stored as `null`, so the spec survives JSON (a session's placement is
 * serialized).
 */
export function dockerSandboxSpecSchema(defaultImage: string | undefined) {
  return z.strictObject(
    {
      image: z
        .string({ error: IMAGE })
        .regex(/^[^\s\0]+$/, IMAGE)
        .optional()
        .transform((image, context) => {
          const chosen = image ?? defaultImage;
          if (chosen !== undefined) return chosen;
          context.addIssue({
            code: "custom",
            message:
              'name an image that is on the Docker host, such as { image: "python:3.12-slim" }, or give the factory a defaultImage',
          });
          return z.NEVER;
        }),
      env: envSchema.default({}),
      workspace: z
        .string()
        .refine(
          isWorkspacePath,
          'it must be a normalized absolute path other than "/", without control characters, such as "/workspace" or "/home/user/work"',
        )
        .transform((path) => path.replace(/\/+$/, ""))
        .default(DEFAULT_WORKSPACE),
      cpus: z
        .number({ error: "it must be a positive number of cores, at least 0.001, such as 0.5 or 2" })
        .refine(
          (cpus) => cpus > 0 && cpus * 1e9 >= 1e6,
          "it must be a positive number of cores, at least 0.001, such as 0.5 or 2",
        )
        .default(DEFAULT_CPUS),
      memoryBytes: integerAtLeast(MIN_MEMORY_BYTES, " bytes (6 MiB, Docker's minimum)").default(
        DEFAULT_MEMORY_BYTES,
      ),
      pidsLimit: integerAtLeast(MIN_PIDS_LIMIT, " processes").default(DEFAULT_PIDS_LIMIT),
      network: z
        .literal("none", {
          error:
            'only "none" is supported: docker sandboxes run without network access (leave it out or pass "none")',
        })
        .default("none"),
      user: z
        .string({ error: 'it must be a user name, a uid or "uid:gid", such as "1000:1000" or "node"' })
        .regex(
          /^[A-Za-z0-9_][A-Za-z0-9_.-]*(:[A-Za-z0-9_][A-Za-z0-9_.-]*)?$/,
          'it must be a user name, a uid or "uid:gid", such as "1000:1000" or "node"',
        )
        .optional(),
      timeoutMs: z
        .union([z.null(), z.literal(Number.POSITIVE_INFINITY), z.number().positive(NO_TIMEOUT)], {
          error: NO_TIMEOUT,
        })
        // Already checked: checkTimeout only maps "none" and overlong timers to Infinity.
        .transform((value) => {
          const checked = checkTimeout(value, "timeoutMs");
          return checked !== undefined && Number.isFinite(checked) ? checked : null;
        })
        .optional(),
    },
    { error: 'it must be an object such as { image: "python:3.12-slim" }, or undefined' },
  ) satisfies z.ZodType<DockerSandboxSpec>;
}

/** A spec after the schema: defaults applied, every field checked. */
export type ParsedSpec = z.output<ReturnType<typeof dockerSandboxSpecSchema>>;
