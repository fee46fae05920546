import { VIEWER_CLIENT_SCRIPT } from "@openrath/lineage-view";

/**
 * The viewer's script, inlined into the page: the typed client of @openrath/lineage-view
 * (`src/viewer-client.ts`) bundled into one classic script. Every piece of recorded text is put
 * in the page through `textContent`, never as markup.
 */
export const VIEWER_SCRIPT: string = VIEWER_CLIENT_SCRIPT;
