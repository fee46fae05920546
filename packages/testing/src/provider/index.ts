import type { ProviderV1 } from "@openrath/core";
import { describe } from "vitest";
import { checkSkipKeys } from "../internal/skip-list.js";
import { abortSuite } from "./abort.suite.js";
import { errorsSuite } from "./errors.suite.js";
import type { ProviderWireFixture } from "./fixture.js";
import { reasoningSuite } from "./reasoning.suite.js";
import { requestMappingSuite } from "./request-mapping.suite.js";
import { responsesSuite } from "./responses.suite.js";
import { retrySuite } from "./retry.suite.js";
import { streamingSuite } from "./streaming.suite.js";
import {
  type ConformanceProviderOptions,
  createSuiteContext,
  type ProviderConformanceCapabilities,
  type ProviderSuiteContext,
} from "./suite-context.js";

export type {
  DecodedMessage,
  DecodedRequest,
  ProviderWireFixture,
  StreamFault,
  WireErrorKind,
  WireScript,
  WireToolCall,
  WireTurn,
  WireUsage,
} from "./fixture.js";
export type { ConformanceProviderOptions, ProviderConformanceCapabilities, ProviderSuiteContext };

/** Options of {@link describeProviderConformance}. */
export interface ProviderConformanceOptions<F extends ProviderWireFixture> {
  /** Names the provider in the suite's title: `provider conformance: <name>`. */
  readonly name: string;
  /** Starts a fresh wire-level server for one test; the suite closes it after the test. */
  readonly start: () => Promise<F>;
  /**
   * Builds the provider under test against `fixture`'s server (its base URL, a test key), with
   * `timeoutMs` when the suite passes one. Called once per test.
   */
  readonly create: (fixture: F, options: ConformanceProviderOptions) => ProviderV1;
  /** What the provider claims; the suite checks every claim and skips the groups of those not made. */
  readonly capabilities?: ProviderConformanceCapabilities;
  /**
   * Tests to skip, with the reason: a key is a group title (`"retry"`), a test title, or
   * `"<group> > <test title>"`. A key that names no group or test fails the suite.
   */
  readonly skip?: Readonly<Record<string, string>>;
  /** Timeout of each test in milliseconds (default 15 000). */
  readonly timeoutMs?: number;
}

/**
 * Registers the provider conformance suite for one `ProviderV1`: a `describe` block with one
 * group per behaviour (request mapping, responses, streaming, errors, retry, abort and timeout,
 * reasoning), every test against a fresh wire-level server that the official vendor SDK under the
 * provider talks to as it would to the real service. The server is scripted through a
 * {@link ProviderWireFixture}: the provider package writes one over its wire fake (vendor-neutral
 * turns in, its wire format out; its wire format in, neutral requests out). Call it at the top
 * level of a `*.conformance.test.ts` file.
 *
 * @example
 * ```ts
 * // src/acme-provider.conformance.test.ts
 * import { describeProviderConformance } from "@openrath/testing/provider";
 * import { acmeProvider } from "./index.js";
 * import { startAcmeFixture } from "./testing/acme-fixture.js";
 *
 * describeProviderConformance({
 *   name: "acme",
 *   start: startAcmeFixture,
 *   create: (fixture, { timeoutMs }) =>
 *     acmeProvider({ baseURL: fixture.baseURL, apiKey: "test", model: "acme-1", timeoutMs }),
 *   capabilities: { reasoning: false },
 * });
 * ```
 */
export function describeProviderConformance<F extends ProviderWireFixture>(
  options: ProviderConformanceOptions<F>,
): void {
  // The groups see the fixture as the base interface; `create` only ever gets the one `start` made.
  const context = createSuiteContext(options) as unknown as ProviderSuiteContext & {
    readonly asked: ReadonlySet<string>;
  };
  describe(`provider conformance: ${options.name}`, () => {
    requestMappingSuite(context);
    responsesSuite(context);
    streamingSuite(context);
    errorsSuite(context);
    retrySuite(context);
    abortSuite(context);
    reasoningSuite(context);

    checkSkipKeys(options.skip, context);
  });
}
