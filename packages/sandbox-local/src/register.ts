import { defaultRegistry } from "@openrath/core";
import { localSandbox } from "./local-sandbox.js";

/** The spec type of the `local` key this entry registers (importing the entry also types the key). */
export type { LocalSandboxSpec } from "./local-sandbox.js";

defaultRegistry().registerSandbox(localSandbox());
