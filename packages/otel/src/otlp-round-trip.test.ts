import { context, SpanStatusCode, trace } from "@opentelemetry/api";
import { OTLPTraceExporter } from "@opentelemetry/exporter-trace-otlp-proto";
import { BatchSpanProcessor, TracerProvider } from "@opentelemetry/sdk-trace";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type ReceiverProcess, spawnOtlpReceiver } from "./testing/receiver-process.js";

let receiver: ReceiverProcess;

beforeAll(async () => {
  receiver = await spawnOtlpReceiver();
});

afterAll(() => receiver.close());

describe("OTLP/HTTP round trip to a receiver process", () => {
  it("delivers a parent and a child span with their ids, attributes and status, decoded from protobuf", async () => {
    const provider = new TracerProvider({
      spanProcessors: [
        new BatchSpanProcessor({
          exporter: new OTLPTraceExporter({ url: receiver.url }),
        }),
      ],
    });
    const tracer = provider.getTracer("round-trip");
    const parent = tracer.startSpan("invoke_agent planner", {
      attributes: { "gen_ai.operation.name": "invoke_agent" },
    });
    const parentContext = trace.setSpan(context.active(), parent);
    const child = tracer.startSpan(
      "chat scripted-model",
      { attributes: { "gen_ai.request.model": "scripted-model", "gen_ai.usage.input_tokens": 12 } },
      parentContext,
    );
    child.setStatus({ code: SpanStatusCode.ERROR, message: "provider refused" });
    child.end();
    parent.end();
    await provider.forceFlush();
    await provider.shutdown();

    const spans = await receiver.received();
    const gotParent = spans.find((span) => span.name === "invoke_agent planner");
    const gotChild = spans.find((span) => span.name === "chat scripted-model");
    expect(gotParent?.spanId).toBe(parent.spanContext().spanId);
    expect(gotParent?.traceId).toBe(parent.spanContext().traceId);
    expect(gotChild?.parentSpanId).toBe(parent.spanContext().spanId);
    expect(gotChild?.traceId).toBe(parent.spanContext().traceId);
    expect(gotChild?.attributes).toMatchObject({
      "gen_ai.request.model": "scripted-model",
      "gen_ai.usage.input_tokens": 12,
    });
    expect(gotChild?.status).toEqual({ code: 2, message: "provider refused" });
    expect(gotChild?.scope).toBe("round-trip");
  });

  it("refuses a body that is not protobuf", async () => {
    const response = await fetch(receiver.url, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: "{}",
    });
    expect(response.status).toBe(415);
  });
});
