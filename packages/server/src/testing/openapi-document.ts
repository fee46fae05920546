import { createDurableRuntime } from "@openrath/runtime-durable";
import { pgliteStore } from "@openrath/store-postgres";
import { createServer } from "../server.js";

/** The server's OpenAPI document as `deploy/openapi.json` holds it (two-space JSON, a final newline). */
export async function openApiText(): Promise<string> {
  const runtime = createDurableRuntime({ store: await pgliteStore({}) });
  // The document does not depend on the auth mode: each route names its grant either way.
  const app = await createServer({ runtime, auth: { mode: "local" } });
  try {
    await app.ready();
    return `${JSON.stringify(app.swagger(), null, 2)}\n`;
  } finally {
    await app.close();
    await runtime.close();
  }
}
