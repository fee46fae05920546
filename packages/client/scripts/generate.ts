import { mkdir, readFile, writeFile } from "node:fs/promises";
import { DOCUMENT, GENERATED, openApiTypes } from "./openapi-types.js";

// Regenerates the client's types after `pnpm --filter @openrath/server openapi` changed the document.
const text = await openApiTypes(await readFile(DOCUMENT, "utf8"));
await mkdir(new URL(".", GENERATED), { recursive: true });
await writeFile(GENERATED, text);
console.log(`wrote ${GENERATED.pathname.split("/").slice(-3).join("/")}`);
