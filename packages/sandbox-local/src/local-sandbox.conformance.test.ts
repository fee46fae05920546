import { serviceAvailable } from "@openrath/testing";
import { describeSandboxConformance } from "@openrath/testing/sandbox";
import { describe } from "vitest";
import { checkBubblewrap } from "./internal/check-bubblewrap.js";
import { localSandbox } from "./local-sandbox.js";

const plain = localSandbox();
describeSandboxConformance({
  name: "local (isolation none)",
  create: () => plain.open(plain.parseSpec!(undefined)),
  capabilities: plain.capabilities,
});

const check = await serviceAvailable("bubblewrap", () => checkBubblewrap("bwrap").then(() => true));
describe.skipIf(!check.available)(`local under bubblewrap (${check.reason})`, () => {
  const isolated = localSandbox({ isolation: "bubblewrap" });
  describeSandboxConformance({
    name: "local (isolation bubblewrap)",
    create: () => isolated.open(isolated.parseSpec!(undefined)),
    capabilities: isolated.capabilities,
  });
});
