import type { SandboxBackendV1, SandboxCapabilities, SandboxV1 } from "@openrath/core";
import { describe } from "vitest";
import { checkSkipKeys } from "../internal/skip-list.js";
import { capabilitiesSuite } from "./capabilities.suite.js";
import { codeSuite } from "./code.suite.js";
import { concurrencySuite } from "./concurrency.suite.js";
import { descriptorSuite } from "./descriptor.suite.js";
import { execSuite } from "./exec.suite.js";
import { filesSuite } from "./files.suite.js";
import { lifecycleSuite } from "./lifecycle.suite.js";
import { misuseSuite } from "./misuse.suite.js";
import { pathsSuite } from "./paths.suite.js";
import { processesSuite } from "./processes.suite.js";
import { streamingSuite } from "./streaming.suite.js";
import { createSuiteContext } from "./suite-context.js";
import { timeoutsSuite } from "./timeouts.suite.js";

export type { SandboxSuiteContext } from "./suite-context.js";

/** Options of {@link describeSandboxConformance}. */
export interface SandboxConformanceOptions {
  /** Names the backend in the suite's title: `sandbox conformance: <name>`. */
  readonly name: string;
  /**
   * Opens a fresh sandbox. Called once per test (several times in the concurrency tests); the suite
   * closes every sandbox it opened after the test.
   */
  readonly create: () => Promise<SandboxV1>;
  /**
   * The backend's descriptor. The suite checks its shape (`kind`, `key`, `specVersion`, the
   * manifest) and that it refuses each of {@link SandboxConformanceOptions.invalidSpecs} with a
   * coded `invalid_spec`, so every adapter is held to one shape.
   */
  readonly backend?: SandboxBackendV1;
  /** Specs the backend must refuse with `invalid_spec` (required with `backend`, at least one). */
  readonly invalidSpecs?: readonly unknown[];
  /**
   * The capability manifest under test (default: the descriptor's `capabilities`). The suite checks
   * every claim: a capability set to `false` (or a language left out) is not skipped but must be
   * refused with `unsupported` (or `unsupported_language`).
   */
  readonly capabilities?: SandboxCapabilities;
  /**
   * Tests to skip, with the reason: a key is a group title (`"timeouts"`), a test title, or
   * `"<group> > <test title>"`. A skipped test is registered with `it.skip` and the reason is shown
   * in its title. A key that names no group or test fails the suite, so typos do not go unnoticed.
   */
  readonly skip?: Readonly<Record<string, string>>;
  /** Timeout of each test in milliseconds (default 30 000). Raise it for backends that open slowly. */
  readonly timeoutMs?: number;
}

/**
 * Registers the sandbox conformance suite for one backend: a `describe` block with one group per
 * behaviour (descriptor, lifecycle, misuse, exec, streaming, files, paths, timeouts, processes,
 * concurrency, code, capabilities), each test on a fresh sandbox. Claims are proved by observing:
 * planted processes are looked for in the process table, planted sockets are probed. Call it at
 * the top level of a `*.conformance.test.ts` file.
 *
 * @example
 * ```ts
 * // src/acme-sandbox.conformance.test.ts
 * import { describeSandboxConformance } from "@openrath/testing/sandbox";
 * import { acmeSandbox } from "./acme-sandbox.js";
 *
 * const backend = acmeSandbox();
 * describeSandboxConformance({
 *   name: "acme",
 *   backend,
 *   invalidSpecs: [{ image: 42 }, { unknownField: true }],
 *   create: () => backend.open({ image: "python:3.12-slim" }),
 *   skip: { "a command killed by a signal reports 128 + the signal number": "the Acme API reports no signals" },
 *   timeoutMs: 60_000,
 * });
 * ```
 */
export function describeSandboxConformance(options: SandboxConformanceOptions): void {
  const capabilities = options.capabilities ?? options.backend?.capabilities;
  if (!capabilities) throw new TypeError("describeSandboxConformance needs backend or capabilities");
  const context = createSuiteContext({ ...options, capabilities });
  describe(`sandbox conformance: ${options.name}`, () => {
    if (options.backend) descriptorSuite(context, options.backend, options.invalidSpecs ?? []);
    lifecycleSuite(context);
    misuseSuite(context);
    execSuite(context);
    streamingSuite(context);
    filesSuite(context);
    pathsSuite(context);
    timeoutsSuite(context);
    processesSuite(context);
    concurrencySuite(context);
    codeSuite(context);
    capabilitiesSuite(context);

    checkSkipKeys(options.skip, context);
  });
}
