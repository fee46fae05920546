// Writes docs/reference/configuration.md from the configuration schema.
import { mkdir, writeFile } from "node:fs/promises";
import { configReference } from "./config.js";

const target = new URL("../../../docs/reference/configuration.md", import.meta.url);
await mkdir(new URL(".", target), { recursive: true });
await writeFile(target, configReference());
console.log("wrote docs/reference/configuration.md");
