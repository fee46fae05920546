import { fileURLToPath } from "node:url";
import { describeMemoryConformance } from "@openrath/testing/memory";
import { afterAll, beforeAll } from "vitest";
import { openVikingMemory } from "./open-viking-memory.js";
import { type FakeOpenViking, startFakeOpenViking } from "./testing/fake-openviking.js";

// The whole memory contract against the wire-faithful fake in api_key mode. Each `create` gets a
// fresh root directory on the one server (an empty store); `reopen` is a new client on that root,
// so persistence and shared writers are the server's state, as with a real OpenViking.
const KEY = "conformance-user-key";
let fake: FakeOpenViking;
let root = "";
let count = 0;

beforeAll(async () => {
  fake = await startFakeOpenViking({ userKeys: { [KEY]: { account: "acme-corp", user: "tester" } } });
});
afterAll(async () => {
  await fake?.close();
});

const backend = (r: string) =>
  openVikingMemory({ url: fake.url, apiKey: KEY, root: r, requestTimeoutMs: 10_000 });

describeMemoryConformance({
  name: "openviking (fake server)",
  create: () => {
    root = `viking://~/memories/openrath-conformance-${++count}`;
    return backend(root).open(undefined);
  },
  reopen: () => backend(root).open(undefined),
  capabilities: openVikingMemory().capabilities,
  // A client process writing to the fake, killed mid-write: what the server acknowledged stays.
  crashWriter: () => ({
    command: process.execPath,
    args: ["--conditions=@openrath/source", "--import", "tsx", "src/testing/crash-writer.ts"],
    cwd: fileURLToPath(new URL("..", import.meta.url)),
    env: { OV_CRASH_URL: fake.url, OV_CRASH_KEY: KEY, OV_CRASH_ROOT: root },
  }),
});
