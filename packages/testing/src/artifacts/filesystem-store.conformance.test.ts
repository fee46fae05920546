import { mkdtempSync, rmSync } from "node:fs";
import { unlink, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { filesystemArtifactStore } from "@openrath/runtime-durable";
import { afterAll } from "vitest";
import { describeArtifactConformance } from "./index.js";

// The filesystem store that `@openrath/runtime-durable` ships is held to the suite here, so the runtime
// package needs no dependency on this one (the two would form a build cycle).
const base = mkdtempSync(join(tmpdir(), "openrath-artifacts-conformance-"));
afterAll(() => rmSync(base, { recursive: true, force: true }));

let root = "";
let count = 0;
const objectPath = (tenant: string, digest: string) => join(root, tenant, digest.slice(0, 2), digest);

describeArtifactConformance({
  name: "filesystem",
  create: async () => {
    count += 1;
    root = join(base, `store-${count}`);
    return filesystemArtifactStore({ root, maxBytes: 8 << 20 });
  },
  reopen: async () => filesystemArtifactStore({ root, maxBytes: 8 << 20 }),
  capabilities: filesystemArtifactStore({ root: base, maxBytes: 8 << 20 }).capabilities,
  largeBytes: 6 << 20,
  tamper: {
    overwrite: (tenant, digest, bytes) => writeFile(objectPath(tenant, digest), bytes),
    remove: (tenant, digest) => unlink(objectPath(tenant, digest)),
  },
});
