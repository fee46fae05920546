import type { ChildProcess } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  type OtlpReceiver,
  otelSetupImport,
  type ReceivedSpan,
  startOtlpReceiver,
} from "../testing/otlp-receiver.js";
import { startOpenrath } from "../testing/run-cli.js";

/** `Span.SpanKind` of the OTLP protobuf. */
const OTLP_KIND = { INTERNAL: 1, PRODUCER: 4, CONSUMER: 5 } as const;

let receiver: OtlpReceiver;
const children: ChildProcess[] = [];
const dirs: string[] = [];

beforeAll(async () => {
  receiver = await startOtlpReceiver();
});

afterAll(async () => {
  for (const child of children.splice(0)) child.kill("SIGKILL");
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
  await receiver.close();
});

/** The receiver's spans once `done` holds of them (each span is exported as it ends), at most ~20 s. */
async function receivedUntil(done: (spans: ReceivedSpan[]) => boolean): Promise<ReceivedSpan[]> {
  let spans: ReceivedSpan[] = [];
  for (let i = 0; i < 200; i++) {
    spans = await receiver.received();
    if (done(spans)) break;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  return spans;
}

describe("openrath serve with an OpenTelemetry SDK registered by --import", () => {
  it("exports the submit span under the caller's traceparent, then the run's step spans and its run span", async () => {
    const state = mkdtempSync(join(tmpdir(), "openrath-traces-"));
    dirs.push(state);
    const serve = startOpenrath(
      ["serve", "--port", "0", "--state", state, "--workflows", "src/testing/fixture-workflows.ts"],
      /OpenRath server on (http:\/\/127\.0\.0\.1:\d+)/,
      { NODE_OPTIONS: otelSetupImport, OPENRATH_TEST_OTLP_URL: receiver.url },
    );
    children.push(serve.child);
    const base = (await serve.matched)[1];

    const caller = { traceId: "5c1f0a6e7b2d4c3a9e8f7d6c5b4a3921", spanId: "1a2b3c4d5e6f7081" };
    const created = await fetch(`${base}/v1/runs`, {
      method: "POST",
      headers: {
        "content-type": "application/json",
        traceparent: `00-${caller.traceId}-${caller.spanId}-01`,
      },
      body: JSON.stringify({ assistant: "ticker", input: "count" }),
    });
    expect(created.status).toBe(201);
    const run = (await created.json()) as { id: string; sessionId: string };
    // The stream ends with the run.
    await (await fetch(`${base}/v1/runs/${run.id}/stream`)).text();
    const ended = (await (await fetch(`${base}/v1/runs/${run.id}`)).json()) as { status: string };
    expect(ended.status).toBe("succeeded");

    const spans = await receivedUntil((all) =>
      all.some((s) => s.name === "run ticker" && s.attributes["openrath.run.id"] === run.id),
    );
    serve.child.kill("SIGTERM");
    expect(await serve.exited).toBe(0);

    // Only this run was submitted: every span is in the caller's trace.
    expect(spans.length).toBeGreaterThan(0);
    expect(new Set(spans.map((s) => s.traceId))).toEqual(new Set([caller.traceId]));
    expect(new Set(spans.map((s) => s.scope))).toEqual(new Set(["@openrath/otel"]));

    const submits = spans.filter((s) => s.name === "submit ticker");
    expect(submits).toHaveLength(1);
    const submit = submits[0]!;
    expect(submit.parentSpanId).toBe(caller.spanId);
    expect(submit.kind).toBe(OTLP_KIND.PRODUCER);
    expect(submit.attributes["openrath.workflow"]).toBe("ticker");
    // The API answers the context the run carries: the caller's trace, the submit span.
    expect(created.headers.get("traceresponse")).toBe(`00-${caller.traceId}-${submit.spanId}-01`);

    const steps = spans.filter((s) => s.name.startsWith("step "));
    expect(steps.map((s) => s.attributes["openrath.step.id"]).sort()).toEqual(["one", "three", "two"]);
    for (const step of steps) {
      expect(step.parentSpanId, step.name).toBe(submit.spanId);
      expect(step.kind, step.name).toBe(OTLP_KIND.CONSUMER);
      expect(step.attributes).toMatchObject({
        "openrath.run.id": run.id,
        "openrath.workflow": "ticker",
        "openrath.session.id": run.sessionId,
        "openrath.worker.id": expect.any(String),
      });
      expect(step.status.code, step.name).toBe(0);
    }

    const runSpans = spans.filter((s) => s.name === "run ticker");
    expect(runSpans).toHaveLength(1);
    expect(runSpans[0]!.parentSpanId).toBe(submit.spanId);
    expect(runSpans[0]!.kind).toBe(OTLP_KIND.INTERNAL);
    expect(runSpans[0]!.attributes).toMatchObject({
      "openrath.run.id": run.id,
      "openrath.run.status": "succeeded",
      "openrath.session.id": run.sessionId,
    });
  }, 120_000);
});
