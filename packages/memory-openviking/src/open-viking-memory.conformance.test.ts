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
});
