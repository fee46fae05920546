/**
 * Faults of the filesystem store with a writer process killed mid-put (SIGKILL, as a crash): no
 * object becomes visible, the leftover stays invisible until sweepIncomplete removes it, and the
 * same put then succeeds.
 */
import { spawn } from "node:child_process";
import { createHash } from "node:crypto";
import { mkdtempSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createInterface } from "node:readline";
import { fileURLToPath, pathToFileURL } from "node:url";
import { afterAll, describe, expect, it } from "vitest";
import { filesystemArtifactStore } from "./filesystem-artifact-store.js";
import { readArtifact } from "./read-artifact.js";

const base = mkdtempSync(join(tmpdir(), "openrath-artifacts-faults-"));
afterAll(() => rmSync(base, { recursive: true, force: true }));
const storeModule = pathToFileURL(
  fileURLToPath(new URL("./filesystem-artifact-store.ts", import.meta.url)),
).href;

const MIB = 1024 * 1024;
function chunk(n: number): Buffer {
  return Buffer.alloc(MIB, n % 251);
}

describe("filesystem store with a writer killed mid-put", () => {
  it("leaves nothing visible, a leftover that sweepIncomplete removes, and a put that succeeds after", async () => {
    const root = join(base, "killed");
    const script = join(base, "writer.mts");
    writeFileSync(
      script,
      `import { filesystemArtifactStore } from ${JSON.stringify(storeModule)};
const store = filesystemArtifactStore({ root: process.argv[2] });
async function* body() {
  for (let n = 0; n < 64; n++) {
    yield Buffer.alloc(${MIB}, n % 251);
    if (n === 8) process.stdout.write("halfway\\n");
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}
await store.put("acme", body());
process.stdout.write("done\\n");
`,
    );
    const child = spawn(process.execPath, ["--import", "tsx", script, root], {
      stdio: ["ignore", "pipe", "inherit"],
    });
    const exited = new Promise((resolve) => child.once("exit", resolve));
    const first = await new Promise<string>((resolve) =>
      createInterface({ input: child.stdout }).once("line", resolve),
    );
    expect(first).toBe("halfway");
    child.kill("SIGKILL");
    await exited;

    const store = filesystemArtifactStore({ root });
    const listed = [];
    for await (const stat of store.list()) listed.push(stat);
    expect(listed, "a partial object became visible").toEqual([]);
    expect(readdirSync(join(root, ".staging")).filter((n) => n.endsWith(".part"))).toHaveLength(1);
    expect(
      await store.sweepIncomplete(),
      "a fresh leftover is kept by default (it may be a put in progress)",
    ).toBe(0);
    expect(await store.sweepIncomplete({ olderThanMs: 0 })).toBe(1);
    expect(readdirSync(join(root, ".staging"))).toEqual([]);

    const hash = createHash("sha256");
    for (let n = 0; n < 64; n++) hash.update(chunk(n));
    const digest = hash.digest("hex");
    const info = await store.put(
      "acme",
      (function* () {
        for (let n = 0; n < 64; n++) yield chunk(n);
      })(),
    );
    expect(info).toMatchObject({ digest, size: 64 * MIB });
    expect((await readArtifact(store, "acme", digest)).length).toBe(64 * MIB);
  }, 60_000);
});
