/** `@openrath/runtime-durable`: durable runs of compiled plans over a store, signals and artifacts. */
export {};
