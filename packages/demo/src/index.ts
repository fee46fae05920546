/**
 * `@openrath/demo`: the MAMS demo in one home, for the CLI (`openrath demo`) and the examples.
 * {@link MamsWorkflow} is the team, {@link TASK} the task it is given, and
 * {@link scriptedBrain} a deterministic model that plays every role, so the demo runs with no API
 * key. The same team as a durable workflow, checkpointed after every member's turn, is
 * `DurableMamsWorkflow` from `@openrath/demo/durable`.
 *
 * @example
 * ```ts
 * import { defaultRegistry, Session } from "@openrath/core";
 * import { MamsWorkflow, scriptedBrain, TASK } from "@openrath/demo";
 * import { localSandbox } from "@openrath/sandbox-local";
 *
 * defaultRegistry().registerSandbox(localSandbox()); // the specialists share one `local` sandbox
 * const answer = await new MamsWorkflow(scriptedBrain()).run(Session.fromUserMessage(TASK));
 * console.log(answer.text()); // Here is what the team found. The sentence has 9 words. …
 * ```
 */
export { MamsWorkflow } from "./mams-workflow.js";
export { ROLES, scriptedBrain } from "./scripted-brain.js";
export { TASK } from "./task.js";
