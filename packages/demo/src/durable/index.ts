/**
 * `@openrath/demo/durable`: the MAMS demo's team as a durable workflow. Apart from the main entry
 * because it needs `@openrath/runtime-durable` (an optional peer dependency of this package).
 */
export { DurableMamsWorkflow } from "./durable-mams-workflow.js";
export { reviewWorkflow } from "./review-workflow.js";
export { type DurableMamsOptions, type DurableMamsResult, runDurableMams } from "./run-durable-mams.js";
