/** The trace and span of the work that made a session, as a tracing observer records them. */
export interface TraceIds {
  readonly traceId: string;
  readonly spanId: string;
}

/** The ids in a lineage node's extras (`trace.id` and `trace.span_id`), or undefined. */
export function traceOf(node: { readonly extras: Readonly<Record<string, unknown>> }): TraceIds | undefined {
  const traceId = node.extras["trace.id"];
  const spanId = node.extras["trace.span_id"];
  return typeof traceId === "string" && traceId !== "" && typeof spanId === "string" && spanId !== ""
    ? { traceId, spanId }
    : undefined;
}

/** Why a trace viewer URL template was refused. */
export interface TemplateRefusal {
  readonly code: "trace_template_not_http" | "trace_template_no_trace_id" | "trace_template_invalid";
  readonly message: string;
}

/** An example template: Jaeger's UI on its default port. */
export const JAEGER_TEMPLATE = "http://localhost:16686/trace/{traceId}?uiFind={spanId}";

/**
 * Checks a trace viewer URL template: an absolute http(s) URL holding `{traceId}` (and, if the
 * viewer can find a span, `{spanId}`). Anything else (`javascript:`, `data:`, a relative path) is
 * refused with a code, so a link built from it can only open a web page.
 */
export function checkTraceTemplate(template: string): TemplateRefusal | undefined {
  if (!template.includes("{traceId}"))
    return { code: "trace_template_no_trace_id", message: "The template must hold {traceId}." };
  let url: URL;
  try {
    url = new URL(template.replaceAll("{traceId}", "0").replaceAll("{spanId}", "0"));
  } catch {
    return { code: "trace_template_invalid", message: "The template is not an absolute URL." };
  }
  if (url.protocol !== "http:" && url.protocol !== "https:")
    return { code: "trace_template_not_http", message: "The template must start with http:// or https://." };
  return undefined;
}

/**
 * The link to a span in the trace viewer: the template with `{traceId}` and `{spanId}` replaced by
 * the ids, each percent-encoded. Undefined when the template is refused by
 * {@link checkTraceTemplate}, or the result is not an http(s) URL.
 */
export function traceUrl(template: string, trace: TraceIds): string | undefined {
  if (checkTraceTemplate(template)) return undefined;
  const filled = template
    .replaceAll("{traceId}", encodeURIComponent(trace.traceId))
    .replaceAll("{spanId}", encodeURIComponent(trace.spanId));
  try {
    const url = new URL(filled);
    return url.protocol === "http:" || url.protocol === "https:" ? url.href : undefined;
  } catch {
    return undefined;
  }
}

const TEMPLATE_KEY = "openrath.studio.traceUrlTemplate";

/** The template this browser keeps (localStorage), if any and still accepted. */
export function storedTraceTemplate(): string | undefined {
  const template = globalThis.localStorage?.getItem(TEMPLATE_KEY) ?? undefined;
  return template && !checkTraceTemplate(template) ? template : undefined;
}

/** Keeps an accepted template in localStorage (an empty one forgets it); a refused one is not kept. */
export function storeTraceTemplate(template: string): TemplateRefusal | undefined {
  const trimmed = template.trim();
  if (trimmed === "") {
    globalThis.localStorage?.removeItem(TEMPLATE_KEY);
    return undefined;
  }
  const refusal = checkTraceTemplate(trimmed);
  if (!refusal) globalThis.localStorage?.setItem(TEMPLATE_KEY, trimmed);
  return refusal;
}
