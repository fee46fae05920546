// Writes deploy/openapi.json from the routes' schemas: `pnpm --filter @openrath/server openapi`.
import { writeFile } from "node:fs/promises";
import { relative } from "node:path";
import { fileURLToPath } from "node:url";
import { openApiText } from "./testing/openapi-document.js";

const target = fileURLToPath(new URL("../../../deploy/openapi.json", import.meta.url));
await writeFile(target, await openApiText());
console.log(`wrote ${relative(process.cwd(), target)}`);
