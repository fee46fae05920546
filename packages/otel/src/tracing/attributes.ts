/**
 * Attribute names: the OpenTelemetry GenAI semantic conventions (`gen_ai.*`, development status,
 * spelled out here because a library must not depend on the conventions' incubating entry) and
 * OpenRath's own (`openrath.*`).
 */
export const GEN_AI = {
  operationName: "gen_ai.operation.name",
  providerName: "gen_ai.provider.name",
  requestModel: "gen_ai.request.model",
  requestMaxTokens: "gen_ai.request.max_tokens",
  requestTemperature: "gen_ai.request.temperature",
  responseModel: "gen_ai.response.model",
  responseFinishReasons: "gen_ai.response.finish_reasons",
  inputTokens: "gen_ai.usage.input_tokens",
  outputTokens: "gen_ai.usage.output_tokens",
  agentName: "gen_ai.agent.name",
  conversationId: "gen_ai.conversation.id",
  toolName: "gen_ai.tool.name",
  toolCallId: "gen_ai.tool.call.id",
  toolType: "gen_ai.tool.type",
  toolDescription: "gen_ai.tool.description",
  toolArguments: "gen_ai.tool.call.arguments",
  toolResult: "gen_ai.tool.call.result",
  inputMessages: "gen_ai.input.messages",
  outputMessages: "gen_ai.output.messages",
} as const;

/** OpenRath's attributes: every span carries the ids that name its place in the lineage and the run. */
export const OPENRATH = {
  sessionId: "openrath.session.id",
  lineageNodeId: "openrath.lineage.node.id",
  lineageParentIds: "openrath.lineage.parent_ids",
  runId: "openrath.run.id",
  runStatus: "openrath.run.status",
  workflow: "openrath.workflow",
  tenantId: "openrath.tenant.id",
  stepId: "openrath.step.id",
  stepAttempt: "openrath.step.attempt",
  workerId: "openrath.worker.id",
  path: "openrath.path",
  caller: "openrath.caller.kind",
  branch: "openrath.branch",
  replayed: "openrath.replayed",
  toolEffect: "openrath.tool.effect",
  sandboxId: "openrath.sandbox.id",
  sandboxMethod: "openrath.sandbox.method",
  memoryHits: "openrath.memory.hits",
  memoryEntries: "openrath.memory.entries",
  memoryQuery: "openrath.memory.query",
  selectorCandidates: "openrath.selector.candidates",
  selectorChosen: "openrath.selector.chosen",
  selectorIndex: "openrath.selector.index",
} as const;

/** `error.type` of the stable conventions. */
export const ERROR_TYPE = "error.type";
