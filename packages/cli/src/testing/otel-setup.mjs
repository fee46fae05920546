// For `NODE_OPTIONS=--import <this file>` in tests: registers an OpenTelemetry tracer provider
// that sends every span as it ends (SimpleSpanProcessor) over OTLP/HTTP protobuf to
// OPENRATH_TEST_OTLP_URL, the way an operator would bring their own SDK to `openrath serve`.
import { trace } from "@opentelemetry/api";
import { OTLPTraceExporter } from "@opentelemetry/exporter-trace-otlp-proto";
import { SimpleSpanProcessor, TracerProvider } from "@opentelemetry/sdk-trace";

const url = process.env.OPENRATH_TEST_OTLP_URL;
if (!url) throw new Error("OPENRATH_TEST_OTLP_URL is not set");
const provider = new TracerProvider({
  spanProcessors: [new SimpleSpanProcessor({ exporter: new OTLPTraceExporter({ url }) })],
});
trace.setGlobalTracerProvider(provider);
