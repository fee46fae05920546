import type { ProviderV1 } from "@openrath/core";
import { createSkipList } from "../internal/skip-list.js";
import type { ProviderWireFixture } from "./fixture.js";

/** What the provider under test claims; the suite checks every claim and skips what is not claimed. */
export interface ProviderConformanceCapabilities {
  /** The provider implements `stream` (default: whether the provider built for the first test has it). */
  readonly streaming?: boolean;
  /**
   * The provider returns reasoning items for a turn with reasoning and sends its own items back
   * (default false). The fixture must then script {@link WireTurn.reasoning}.
   */
  readonly reasoning?: boolean;
  /** The provider honours a `timeoutMs` it is built with on a server that never answers (default true). */
  readonly timeout?: boolean;
  /**
   * The API has stop sequences and the provider sends `stop` (default true). Without them, the
   * suite checks that a request with `stop` fails with `provider_bad_request` instead of losing
   * them silently.
   */
  readonly stopSequences?: boolean;
}

/** How the suite asks for a provider. */
export interface ConformanceProviderOptions {
  /** The longest the provider may wait for the server, in milliseconds, when a test needs one. */
  readonly timeoutMs?: number;
}

/** What every group of the provider conformance suite receives. */
export interface ProviderSuiteContext<F extends ProviderWireFixture = ProviderWireFixture> {
  readonly start: () => Promise<F>;
  readonly create: (fixture: F, options: ConformanceProviderOptions) => ProviderV1;
  readonly capabilities: Required<ProviderConformanceCapabilities>;
  readonly timeoutMs: number;
  /** The caller's reason to skip `title`, or `undefined`; every title asked about is remembered. */
  skipped(title: string): string | undefined;
}

/** @internal Builds the context {@link describeProviderConformance} hands to every group. */
export function createSuiteContext<F extends ProviderWireFixture>(options: {
  readonly start: () => Promise<F>;
  readonly create: (fixture: F, options: ConformanceProviderOptions) => ProviderV1;
  readonly capabilities?: ProviderConformanceCapabilities;
  readonly skip?: Readonly<Record<string, string>>;
  readonly timeoutMs?: number;
}): ProviderSuiteContext<F> & { readonly asked: ReadonlySet<string> } {
  const skips = createSkipList(options.skip);
  const claims = options.capabilities ?? {};
  return {
    start: options.start,
    create: options.create,
    capabilities: {
      streaming: claims.streaming ?? true,
      reasoning: claims.reasoning ?? false,
      timeout: claims.timeout ?? true,
      stopSequences: claims.stopSequences ?? true,
    },
    timeoutMs: options.timeoutMs ?? 15_000,
    asked: skips.asked,
    skipped: skips.skipped,
  };
}
