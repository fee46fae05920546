/**
 * `@openrath/client`: a typed client of the OpenRath Agent Server (`@openrath/server`), for Node
 * 20 and browsers. Its types are generated from the server's OpenAPI document
 * (`deploy/openapi.json`) into `src/generated/openapi.ts`.
 */
export { type ClientOptions, createClient } from "./create-client.js";
export type {
  LiveEvent,
  ReconnectOptions,
  StoredEvent,
  StreamEvent,
  StreamOptions,
} from "./event-stream.js";
export type { components, paths } from "./generated/openapi.js";
export { OpenRathApiError, type OpenRathApiErrorInit } from "./openrath-api-error.js";
export type {
  ArtifactMethods,
  AssistantMethods,
  AuditMethods,
  AuthMethods,
  CreateRunOptions,
  EffectMethods,
  EventMethods,
  HealthMethods,
  InterruptMethods,
  OpenRathClient,
  RequestOptions,
  RunMethods,
  SessionMethods,
  TokenMethods,
} from "./openrath-client.js";
export type * from "./types.js";
