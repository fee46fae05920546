import { serviceAvailable } from "@openrath/testing";
import { describeSandboxConformance } from "@openrath/testing/sandbox";
import { afterAll, beforeAll, describe } from "vitest";
import { openSandbox } from "./open-sandbox.js";
import { bwrapWorks, type FakeOpenSandbox, startFakeOpenSandbox } from "./testing/fake-opensandbox.js";

// The fake runs every command in bubblewrap; without it there is nothing real to test.
const bubblewrap = await serviceAvailable("bubblewrap", bwrapWorks);

let fake: FakeOpenSandbox;
let domain = "";

describe.skipIf(!bubblewrap.available)(`opensandbox against the fake server (${bubblewrap.reason})`, () => {
  beforeAll(async () => {
    // Pending first (the spec's and Kubernetes' answer), so every open polls the state.
    fake = await startFakeOpenSandbox({ createState: "Pending", pendingPolls: 1 });
    domain = fake.domain;
  });
  afterAll(async () => {
    await fake?.close();
  });

  const backend = () => openSandbox({ domain, readyTimeoutMs: 20_000 });
  describeSandboxConformance({
    name: "opensandbox",
    create: () => {
      const b = backend();
      return b.open(b.parseSpec!(undefined));
    },
    backend: openSandbox(),
    invalidSpecs: [
      "python:3.12",
      { imagee: "python:3.12" },
      { image: "" },
      { timeoutSeconds: 30 },
      { workspace: "relative" },
      { metadata: { "opensandbox.io/x": "y" } },
      { entrypoint: [] },
    ],
  });
});
