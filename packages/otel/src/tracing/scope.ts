import { AsyncLocalStorage } from "node:async_hooks";
import { type Attributes, type Context, context, type Tracer } from "@opentelemetry/api";

/**
 * Where OpenRath's work runs in the trace: the context its spans are children of, the attributes
 * every span of the run carries, and the tracer and content setting of the observer.
 */
export interface TraceScope {
  readonly context: Context;
  readonly base: Attributes;
  readonly tracer: Tracer;
  readonly captureContent: boolean;
}

// Kept here, not only in the OTel context: a process with no context manager registered (the API's
// default) still nests OpenRath's spans, and spans made in a tool or step (forks, merges, sandbox
// commands) find their parent.
const scopes = new AsyncLocalStorage<TraceScope>();

/** The scope of the work running now, if any. */
export function currentScope(): TraceScope | undefined {
  return scopes.getStore();
}

/** The context new spans are children of: the current scope's, else the OTel active context. */
export function parentContext(): Context {
  return scopes.getStore()?.context ?? context.active();
}

/** Runs `fn` in `scope` (and with its context active for OTel instrumentation under it). */
export function inScope<T>(scope: TraceScope, fn: () => T): T {
  return scopes.run(scope, () => context.with(scope.context, fn));
}
