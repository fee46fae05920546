// The process the memory conformance suite kills with SIGKILL mid-write: an OpenViking client on
// the server at OV_CRASH_URL (the fake, in the test process), key OV_CRASH_KEY, root OV_CRASH_ROOT.
import { runMemoryWriter } from "@openrath/testing/memory-writer";
import { openVikingMemory } from "../open-viking-memory.js";

const { OV_CRASH_URL: url, OV_CRASH_KEY: apiKey, OV_CRASH_ROOT: root } = process.env;
if (!url || !apiKey || !root) throw new Error("OV_CRASH_URL, OV_CRASH_KEY and OV_CRASH_ROOT must be set");
await runMemoryWriter(() => openVikingMemory({ url, apiKey, root }).open(undefined));
