import { type ChildProcess, spawn } from "node:child_process";
import { once } from "node:events";
import { fileURLToPath } from "node:url";
import { context, SpanStatusCode, trace } from "@opentelemetry/api";
import { OTLPTraceExporter } from "@opentelemetry/exporter-trace-otlp-proto";
import { BatchSpanProcessor, TracerProvider } from "@opentelemetry/sdk-trace";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { ReceivedSpan } from "./testing/otlp-receiver.js";

const receiverScript = fileURLToPath(new URL("./testing/otlp-receiver.ts", import.meta.url));

let receiver: ChildProcess;
let port: number;

beforeAll(async () => {
  receiver = spawn(process.execPath, ["--import", "tsx", receiverScript], {
    stdio: ["ignore", "pipe", "inherit"],
  });
  let seen = "";
  for await (const part of receiver.stdout ?? []) {
    seen += String(part);
    const match = /otlp-receiver listening (\d+)/.exec(seen);
    if (match) {
      port = Number(match[1]);
      break;
    }
  }
  expect(port).toBeGreaterThan(0);
});

afterAll(async () => {
  if (receiver.exitCode === null) {
    receiver.kill("SIGTERM");
    await once(receiver, "exit");
  }
});

async function received(): Promise<ReceivedSpan[]> {
  const response = await fetch(`http://127.0.0.1:${port}/received`);
  return (await response.json()) as ReceivedSpan[];
}

describe("OTLP/HTTP round trip to a receiver process", () => {
  it("delivers a parent and a child span with their ids, attributes and status, decoded from protobuf", async () => {
    const provider = new TracerProvider({
      spanProcessors: [
        new BatchSpanProcessor({
          exporter: new OTLPTraceExporter({ url: `http://127.0.0.1:${port}/v1/traces` }),
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

    const spans = await received();
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
    const response = await fetch(`http://127.0.0.1:${port}/v1/traces`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: "{}",
    });
    expect(response.status).toBe(415);
  });
});
