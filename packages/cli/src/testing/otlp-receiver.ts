// The OTLP/HTTP receiver of @openrath/otel's tests, as its own process, for the cli's tests.
import { type ChildProcess, spawn } from "node:child_process";
import { once } from "node:events";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import { packageDir } from "./run-cli.js";

/** One span as the receiver decoded it from protobuf (ids in lowercase hex, kind as in OTLP). */
export interface ReceivedSpan {
  readonly traceId: string;
  readonly spanId: string;
  readonly parentSpanId: string;
  readonly name: string;
  readonly kind: number;
  readonly attributes: Readonly<Record<string, unknown>>;
  readonly status: { readonly code: number; readonly message: string };
  readonly scope: string;
}

/** A running receiver process. */
export interface OtlpReceiver {
  /** Its `/v1/traces` endpoint. */
  readonly url: string;
  received(): Promise<ReceivedSpan[]>;
  close(): Promise<void>;
}

/** `NODE_OPTIONS` value that registers a tracer provider exporting to `OPENRATH_TEST_OTLP_URL`. */
export const otelSetupImport = `--import=${new URL("./otel-setup.mjs", import.meta.url).href}`;

const otelDir = dirname(createRequire(import.meta.url).resolve("@openrath/otel/package.json"));

/** Starts the receiver on a free loopback port. */
export async function startOtlpReceiver(): Promise<OtlpReceiver> {
  const child: ChildProcess = spawn(
    process.execPath,
    ["--import", "tsx", join(otelDir, "src/testing/otlp-receiver.ts")],
    { cwd: packageDir, stdio: ["ignore", "pipe", "inherit"] },
  );
  let seen = "";
  let port = 0;
  for await (const part of child.stdout ?? []) {
    seen += String(part);
    const match = /otlp-receiver listening (\d+)/.exec(seen);
    if (match) {
      port = Number(match[1]);
      break;
    }
  }
  if (port === 0) throw new Error(`the OTLP receiver did not start: ${seen}`);
  return {
    url: `http://127.0.0.1:${port}/v1/traces`,
    async received() {
      return (await (await fetch(`http://127.0.0.1:${port}/received`)).json()) as ReceivedSpan[];
    },
    async close() {
      if (child.exitCode !== null || child.signalCode !== null) return;
      child.kill("SIGTERM");
      await once(child, "exit");
    },
  };
}
