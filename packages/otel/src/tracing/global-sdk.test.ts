import { Session } from "@openrath/core";
import { trace } from "@opentelemetry/api";
import { InMemorySpanExporter, SimpleSpanProcessor, TracerProvider } from "@opentelemetry/sdk-trace";
import { afterEach, describe, expect, it } from "vitest";
import { openrathTracing } from "./openrath-tracing.js";

afterEach(() => {
  trace.disable();
});

/** One observed piece of work (a selector's choice, the lightest kind) through `observer`. */
async function observeOnce(observer: ReturnType<typeof openrathTracing>["observer"]) {
  const session = Session.fromUserMessage("pick one");
  let link: unknown = "unset";
  await observer.observe(
    { kind: "select", selector: "router", candidates: ["a", "b"], session },
    async (span) => {
      link = span.link;
      return { index: 0, session };
    },
  );
  return link;
}

describe("tracing through the global tracer provider", () => {
  it("makes no span while no SDK is registered, and records from the moment one is, until it is removed", async () => {
    const tracing = openrathTracing();
    expect(await observeOnce(tracing.observer)).toBeUndefined();

    const exporter = new InMemorySpanExporter();
    trace.setGlobalTracerProvider(
      new TracerProvider({ spanProcessors: [new SimpleSpanProcessor({ exporter })] }),
    );
    const link = (await observeOnce(tracing.observer)) as { traceId: string; spanId: string } | undefined;
    expect(link?.spanId).toMatch(/^[0-9a-f]{16}$/);
    expect(exporter.getFinishedSpans().map((s) => [s.name, s.spanContext().spanId])).toEqual([
      ["select router", link?.spanId],
    ]);

    trace.disable();
    expect(await observeOnce(tracing.observer)).toBeUndefined();
    expect(exporter.getFinishedSpans()).toHaveLength(1);
  });

  it("a tracer given explicitly is always used, registered globally or not", async () => {
    const exporter = new InMemorySpanExporter();
    const provider = new TracerProvider({ spanProcessors: [new SimpleSpanProcessor({ exporter })] });
    const tracing = openrathTracing({ tracer: provider.getTracer("mine") });
    expect(await observeOnce(tracing.observer)).toMatchObject({ spanId: expect.any(String) });
    expect(exporter.getFinishedSpans()).toHaveLength(1);
  });
});
