// The node kinds live in @openrath/lineage-view, shared with Studio's graph.
export { NODE_KINDS, type NodeKind, nodeKindOf, nodeShapePath } from "@openrath/lineage-view";
