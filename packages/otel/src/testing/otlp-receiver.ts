/**
 * A small OTLP/HTTP trace receiver for tests: `POST /v1/traces` with an
 * `ExportTraceServiceRequest` in protobuf (optionally gzip), decoded with the OpenTelemetry
 * project's generated OTLP protobuf code; `GET /received` answers the spans decoded so far as JSON.
 * Run it as its own process (`node --import tsx otlp-receiver.ts`): it prints
 * `otlp-receiver listening <port>` once it accepts connections, on 127.0.0.1 only.
 */
import { createServer, type IncomingMessage, type Server } from "node:http";
import { createRequire } from "node:module";
import { pathToFileURL } from "node:url";
import { gunzipSync } from "node:zlib";

/** One decoded span, ids in lowercase hex. */
export interface ReceivedSpan {
  readonly traceId: string;
  readonly spanId: string;
  readonly parentSpanId: string;
  readonly name: string;
  readonly kind: number;
  readonly startTimeUnixNano: string;
  readonly endTimeUnixNano: string;
  readonly attributes: Readonly<Record<string, unknown>>;
  readonly status: { readonly code: number; readonly message: string };
  readonly scope: string;
  readonly resource: Readonly<Record<string, unknown>>;
}

interface ProtoType {
  decode(bytes: Uint8Array): unknown;
  encode(message: object): { finish(): Uint8Array };
  toObject(message: unknown, options: object): Record<string, unknown>;
}

const require = createRequire(import.meta.url);
const generated = require("otlp-proto-root/build/src/generated/root.js") as {
  opentelemetry: {
    proto: {
      collector: {
        trace: { v1: { ExportTraceServiceRequest: ProtoType; ExportTraceServiceResponse: ProtoType } };
      };
    };
  };
};
const { ExportTraceServiceRequest, ExportTraceServiceResponse } =
  generated.opentelemetry.proto.collector.trace.v1;

interface KeyValue {
  key: string;
  value?: Record<string, unknown>;
}

function anyValueOf(any: Record<string, unknown> | undefined): unknown {
  if (!any) return null;
  if ("stringValue" in any) return any.stringValue;
  if ("boolValue" in any) return any.boolValue;
  if ("intValue" in any) return Number(any.intValue);
  if ("doubleValue" in any) return any.doubleValue;
  if ("arrayValue" in any) {
    const values = ((any.arrayValue as { values?: Record<string, unknown>[] }).values ?? []).map(anyValueOf);
    return values;
  }
  return null;
}

function attributesOf(list: KeyValue[] | undefined): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const { key, value } of list ?? []) out[key] = anyValueOf(value);
  return out;
}

/** Decodes one `ExportTraceServiceRequest` body into its spans. */
export function decodeTraceRequest(body: Uint8Array): ReceivedSpan[] {
  const message = ExportTraceServiceRequest.decode(body);
  const object = ExportTraceServiceRequest.toObject(message, {
    longs: String,
    bytes: String,
    defaults: true,
  });
  const spans: ReceivedSpan[] = [];
  const hex = (base64: unknown) => Buffer.from(String(base64 ?? ""), "base64").toString("hex");
  for (const resourceSpans of (object.resourceSpans ?? []) as Record<string, unknown>[]) {
    const resource = attributesOf(
      (resourceSpans.resource as { attributes?: KeyValue[] } | undefined)?.attributes,
    );
    for (const scopeSpans of (resourceSpans.scopeSpans ?? []) as Record<string, unknown>[]) {
      const scope = String((scopeSpans.scope as { name?: string } | undefined)?.name ?? "");
      for (const span of (scopeSpans.spans ?? []) as Record<string, unknown>[]) {
        const status = (span.status ?? {}) as { code?: number; message?: string };
        spans.push({
          traceId: hex(span.traceId),
          spanId: hex(span.spanId),
          parentSpanId: hex(span.parentSpanId),
          name: String(span.name),
          kind: Number(span.kind),
          startTimeUnixNano: String(span.startTimeUnixNano),
          endTimeUnixNano: String(span.endTimeUnixNano),
          attributes: attributesOf(span.attributes as KeyValue[]),
          status: { code: Number(status.code ?? 0), message: String(status.message ?? "") },
          scope,
          resource,
        });
      }
    }
  }
  return spans;
}

async function bodyOf(request: IncomingMessage, limit: number): Promise<Buffer> {
  const parts: Buffer[] = [];
  let size = 0;
  for await (const part of request) {
    size += (part as Buffer).length;
    if (size > limit) throw new Error("body too large");
    parts.push(part as Buffer);
  }
  const body = Buffer.concat(parts);
  return request.headers["content-encoding"] === "gzip" ? gunzipSync(body) : body;
}

/** A running receiver. */
export interface OtlpReceiver {
  readonly port: number;
  readonly spans: readonly ReceivedSpan[];
  close(): Promise<void>;
}

/** Starts a receiver on 127.0.0.1 (`port` 0 picks a free one). */
export async function startOtlpReceiver(port = 0): Promise<OtlpReceiver> {
  const spans: ReceivedSpan[] = [];
  const server: Server = createServer((request, response) => {
    if (request.method === "GET" && request.url === "/received") {
      response.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify(spans));
      return;
    }
    if (request.method !== "POST" || request.url !== "/v1/traces") {
      response.writeHead(404).end();
      return;
    }
    if (request.headers["content-type"] !== "application/x-protobuf") {
      response.writeHead(415).end();
      return;
    }
    bodyOf(request, 16 * 1024 * 1024).then(
      (body) => {
        spans.push(...decodeTraceRequest(body));
        const reply = ExportTraceServiceResponse.encode({}).finish();
        response.writeHead(200, { "content-type": "application/x-protobuf" }).end(Buffer.from(reply));
      },
      (error: Error) => response.writeHead(400, { "content-type": "text/plain" }).end(error.message),
    );
  });
  await new Promise<void>((resolve) => server.listen(port, "127.0.0.1", resolve));
  const address = server.address();
  if (address === null || typeof address === "string") throw new Error("receiver has no port");
  return {
    port: address.port,
    spans,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const receiver = await startOtlpReceiver(Number(process.env.OTLP_RECEIVER_PORT ?? 0));
  process.stdout.write(`otlp-receiver listening ${receiver.port}\n`);
  const stop = () => void receiver.close().then(() => process.exit(0));
  process.on("SIGTERM", stop);
  process.on("SIGINT", stop);
}
