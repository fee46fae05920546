import { defineWorkflow } from "../definition/builder.js";

/**
 * The workflow of imported runs (`runtime.importSession`): one step that would hand the session
 * back unchanged. No worker runs it: the importer ends each run itself, so the plan exists only
 * to give imported runs a name and a revision in the store.
 */
export const IMPORT_WORKFLOW = defineWorkflow("openrath.import").step("imported", (session) => session, {
  entry: true,
});
