/**
 * `@openrath/lineage-view`: what Studio's session graph and the self-contained page of
 * `openrath lineage --format html` share: node kinds and their shapes, the view data built from
 * a run's sessions (transcripts and merge sides rebuilt from lineage), every path a chunk came
 * down, and the page's client as one inline script.
 */
export { VIEWER_CLIENT_SCRIPT } from "./generated/viewer-client-script.js";
export {
  allPaths,
  childrenOf,
  haystack,
  type LineageViewData,
  lineageFromSessions,
  mergeSides,
  type SessionJsonLike,
  sumUsage,
  type ViewChunk,
} from "./lineage-data.js";
export { NODE_KINDS, type NodeKind, nodeKindOf, nodeShapePath } from "./node-kinds.js";
