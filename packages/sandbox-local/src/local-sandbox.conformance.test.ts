import { serviceAvailable } from "@openrath/testing";
import { describeSandboxConformance } from "@openrath/testing/sandbox";
import { describe } from "vitest";
import { checkBubblewrap } from "./internal/check-bubblewrap.js";
import { localSandbox, localSandboxWith } from "./local-sandbox.js";

const plain = localSandbox();
const invalidSpecs = [
  "./work",
  { workdir: "./typo" },
  { workspace: 42 },
  { env: { "A=B": "x" } },
  { timeoutMs: 0 },
  { isolation: "docker" },
];
describeSandboxConformance({
  name: "local (isolation none)",
  backend: plain,
  invalidSpecs,
  create: () => plain.open(plain.parseSpec!(undefined)),
});

// Where a host refuses commands a PID namespace each, the best-effort kill takes over (ADR 0023).
const fallback = localSandboxWith({}, () => undefined);
describeSandboxConformance({
  name: "local (isolation none, without PID namespaces)",
  backend: fallback,
  invalidSpecs,
  create: () => fallback.open(fallback.parseSpec!(undefined)),
});

const check = await serviceAvailable("bubblewrap", () => checkBubblewrap("bwrap").then(() => true));
describe.skipIf(!check.available)(`local under bubblewrap (${check.reason})`, () => {
  const isolated = localSandbox({ isolation: "bubblewrap" });
  describeSandboxConformance({
    name: "local (isolation bubblewrap)",
    backend: isolated,
    invalidSpecs: [...invalidSpecs, { isolation: "none" }],
    create: () => isolated.open(isolated.parseSpec!(undefined)),
  });
});
