import { describe, expect, it } from "vitest";
import { checkTraceTemplate, JAEGER_TEMPLATE, traceOf, traceUrl } from "./trace-link.js";

const trace = { traceId: "4bf92f3577b34da6a3ce929d0e0e4736", spanId: "00f067aa0ba902b7" };

describe("trace links", () => {
  it("fills a Jaeger template with the node's trace and span ids", () => {
    expect(traceUrl(JAEGER_TEMPLATE, trace)).toBe(
      "http://localhost:16686/trace/4bf92f3577b34da6a3ce929d0e0e4736?uiFind=00f067aa0ba902b7",
    );
    expect(traceUrl("https://traces.example/t/{traceId}", trace)).toBe(
      "https://traces.example/t/4bf92f3577b34da6a3ce929d0e0e4736",
    );
  });

  it("percent-encodes ids, so an id cannot add a path, a query or a scheme", () => {
    const hostile = { traceId: "../../admin?x=1#", spanId: "a&b=javascript:alert(1)" };
    const url = traceUrl(JAEGER_TEMPLATE, hostile)!;
    expect(url).toBe(
      "http://localhost:16686/trace/..%2F..%2Fadmin%3Fx%3D1%23?uiFind=a%26b%3Djavascript%3Aalert(1)",
    );
    expect(new URL(url).pathname).toBe("/trace/..%2F..%2Fadmin%3Fx%3D1%23");
    expect(new URL(url).searchParams.get("uiFind")).toBe("a&b=javascript:alert(1)");
  });

  it("refuses templates that are not absolute http(s) URLs holding {traceId}", () => {
    expect(checkTraceTemplate("javascript:alert(document.cookie)//{traceId}")?.code).toBe(
      "trace_template_not_http",
    );
    expect(traceUrl("javascript:alert(document.cookie)//{traceId}", trace)).toBeUndefined();
    expect(traceUrl("JavaScript:alert(1)//{traceId}", trace)).toBeUndefined();
    expect(checkTraceTemplate("data:text/html,<b>{traceId}</b>")?.code).toBe("trace_template_not_http");
    expect(checkTraceTemplate("/trace/{traceId}")?.code).toBe("trace_template_invalid");
    expect(checkTraceTemplate("http://localhost:16686/search")?.code).toBe("trace_template_no_trace_id");
    expect(checkTraceTemplate(JAEGER_TEMPLATE)).toBeUndefined();
  });

  it("reads the ids from a lineage node's extras, and nothing from other extras", () => {
    expect(traceOf({ extras: { "trace.id": trace.traceId, "trace.span_id": trace.spanId } })).toEqual(trace);
    expect(traceOf({ extras: { "trace.id": trace.traceId } })).toBeUndefined();
    expect(traceOf({ extras: { "trace.id": 7, "trace.span_id": trace.spanId } })).toBeUndefined();
    expect(traceOf({ extras: {} })).toBeUndefined();
  });
});
