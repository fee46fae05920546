import { writeFile } from "node:fs/promises";
import { bundleClient, generatedModule } from "./bundle-client.js";

// Writes src/generated/viewer-client-script.ts; a test fails when the committed file drifts.
await writeFile(
  new URL("../src/generated/viewer-client-script.ts", import.meta.url),
  generatedModule(await bundleClient()),
);
