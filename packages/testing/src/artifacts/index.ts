import type { ArtifactCapabilities, ArtifactStoreV1 } from "@openrath/runtime-durable/store";
import { describe } from "vitest";
import { checkSkipKeys } from "../internal/skip-list.js";
import { atomicitySuite } from "./atomicity.suite.js";
import { capabilitiesSuite } from "./capabilities.suite.js";
import { idempotencySuite } from "./idempotency.suite.js";
import { integritySuite } from "./integrity.suite.js";
import { lifecycleSuite } from "./lifecycle.suite.js";
import { listingSuite } from "./listing.suite.js";
import { putGetSuite } from "./put-get.suite.js";
import { streamingSuite } from "./streaming.suite.js";
import { type ArtifactTamper, createSuiteContext } from "./suite-context.js";
import { tenantsSuite } from "./tenants.suite.js";
import { validationSuite } from "./validation.suite.js";

export type { ArtifactSuiteContext, ArtifactTamper } from "./suite-context.js";

/** Options of {@link describeArtifactConformance}. */
export interface ArtifactConformanceOptions {
  /** Names the backend in the suite's title: `artifact conformance: <name>`. */
  readonly name: string;
  /**
   * Opens a fresh, empty store (a new directory, a new bucket prefix). Called once per test; the
   * suite closes every store it opened after the test.
   */
  readonly create: () => Promise<ArtifactStoreV1>;
  /**
   * Opens a second handle to the store the latest `create` made, for the `concurrentWriters` claim.
   * Required when that claim is true.
   */
  readonly reopen?: () => Promise<ArtifactStoreV1>;
  /** The backend's capability manifest; the suite checks every claim it can observe. */
  readonly capabilities: ArtifactCapabilities;
  /**
   * Hooks that damage or remove an object behind the store's back. Without them the integrity
   * tests are skipped with the reason shown; a backend should always give them.
   */
  readonly tamper?: ArtifactTamper;
  /**
   * Size in bytes of the large objects the streaming and atomicity tests use (default 24 MiB).
   * Make it larger than the backend's multipart threshold so those tests cross it.
   */
  readonly largeBytes?: number;
  /**
   * Tests to skip, with the reason: a key is a group title (`"streaming"`), a test title, or
   * `"<group> > <test title>"`. A key that names no group or test fails the suite.
   */
  readonly skip?: Readonly<Record<string, string>>;
  /** Timeout of each test in milliseconds (default 30 000). */
  readonly timeoutMs?: number;
}

/**
 * Registers the artifact store conformance suite for one backend: a `describe` block with one
 * group per guarantee of {@link ArtifactStoreV1} (put and get, idempotent puts, validation,
 * tenant isolation, streaming, integrity, atomic puts, stat/delete/list, lifecycle,
 * capabilities), each test on a fresh store. Call it at the top level of a
 * `*.conformance.test.ts` file.
 *
 * @example
 * ```ts
 * // src/acme-artifacts.conformance.test.ts
 * import { describeArtifactConformance } from "@openrath/testing/artifacts";
 * import { acmeArtifactStore } from "./acme-artifact-store.js";
 *
 * let prefix = "";
 * describeArtifactConformance({
 *   name: "acme",
 *   create: async () => acmeArtifactStore({ prefix: (prefix = `test-${crypto.randomUUID()}`) }),
 *   reopen: async () => acmeArtifactStore({ prefix }),
 *   capabilities: acmeArtifactStore({ prefix: "x" }).capabilities,
 *   tamper: { overwrite: (t, d, bytes) => rawWrite(prefix, t, d, bytes), remove: (t, d) => rawDelete(prefix, t, d) },
 * });
 * ```
 */
export function describeArtifactConformance(options: ArtifactConformanceOptions): void {
  const context = createSuiteContext(options);
  describe(`artifact conformance: ${options.name}`, () => {
    putGetSuite(context);
    idempotencySuite(context);
    validationSuite(context);
    tenantsSuite(context);
    streamingSuite(context);
    integritySuite(context);
    atomicitySuite(context);
    listingSuite(context);
    lifecycleSuite(context);
    capabilitiesSuite(context);

    checkSkipKeys(options.skip, context);
  });
}
