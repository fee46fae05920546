import type { RunStoreCapabilities, RunStoreV1 } from "@openrath/runtime-durable/store";
import { type ConformanceContext, conformanceContext } from "../internal/suite-context.js";

/**
 * What every group of the store conformance suite receives. `create` opens a fresh, empty store;
 * `peer` a second handle on it (concurrency tests use the one handle without it).
 */
export interface StoreSuiteContext extends ConformanceContext<RunStoreV1, RunStoreCapabilities> {}

/** @internal Builds the context {@link describeStoreConformance} hands to every group. */
export const createSuiteContext = conformanceContext<RunStoreV1, RunStoreCapabilities>;
