/**
 * Starts `otlp-receiver.ts` as its own process for a test file, so the spans travel over a real
 * loopback socket as OTLP/HTTP protobuf and are decoded by code the exporter never touches.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { once } from "node:events";
import { fileURLToPath } from "node:url";
import type { ReceivedSpan } from "./otlp-receiver.js";

const receiverScript = fileURLToPath(new URL("./otlp-receiver.ts", import.meta.url));

/** A receiver process: its port, what it decoded so far, and how to stop it. */
export interface ReceiverProcess {
  readonly port: number;
  /** The OTLP/HTTP traces endpoint, for `new OTLPTraceExporter({ url })`. */
  readonly url: string;
  received(): Promise<ReceivedSpan[]>;
  close(): Promise<void>;
}

/** Spawns the receiver (`node --import tsx`) and waits until it listens. */
export async function spawnOtlpReceiver(): Promise<ReceiverProcess> {
  const child: ChildProcess = spawn(process.execPath, ["--import", "tsx", receiverScript], {
    stdio: ["ignore", "pipe", "inherit"],
  });
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
    port,
    url: `http://127.0.0.1:${port}/v1/traces`,
    async received() {
      const response = await fetch(`http://127.0.0.1:${port}/received`);
      return (await response.json()) as ReceivedSpan[];
    },
    async close() {
      if (child.exitCode !== null || child.signalCode !== null) return;
      child.kill("SIGTERM");
      await once(child, "exit");
    },
  };
}
