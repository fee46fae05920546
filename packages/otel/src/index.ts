/**
 * `@openrath/otel`: OpenTelemetry instrumentation for OpenRath through the hooks core and the
 * durable runtime offer. With no SDK registered every instrument is the API's no-op.
 */
export {};
