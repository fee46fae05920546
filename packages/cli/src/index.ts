export { type DemoOptions, type DemoResult, runDemo } from "./demo/demo.js";
export { type CliIO, main, type OutputStream } from "./main.js";
export { parseDuration } from "./parse-duration.js";
export {
  RECORDING_MANIFEST,
  type Recording,
  type RecordingManifest,
  readManifest,
  readRecording,
  writeRecording,
} from "./recording.js";
export {
  type ReplayDivergence,
  type ReplayRecordingOptions,
  type ReplayReport,
  replayRecording,
} from "./replay-recording.js";
export { type ReplayableWorkflow, replayableWorkflows } from "./replayable-workflows.js";
export {
  type LineageViewerData,
  type LineageViewerInput,
  type RenderLineageHtmlOptions,
  renderLineageHtml,
  type ViewerSession,
} from "./viewer/render-lineage-html.js";
