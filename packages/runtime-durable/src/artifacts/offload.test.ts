import { mkdtempSync, rmSync } from "node:fs";
import { unlink, utimes, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Chunk } from "@openrath/core";
import { afterAll, describe, expect, it } from "vitest";
import { collectArtifactGarbage } from "./collect-garbage.js";
import { filesystemArtifactStore } from "./filesystem-artifact-store.js";
import { needsOffload, OFFLOADED_KEY, offloadChunk, offloadedArtifacts, resolveChunk } from "./offload.js";

const base = mkdtempSync(join(tmpdir(), "openrath-offload-"));
afterAll(() => rmSync(base, { recursive: true, force: true }));
let n = 0;
function store() {
  const root = join(base, `s${++n}`);
  const artifacts = filesystemArtifactStore({ root });
  const path = (tenant: string, digest: string) => join(root, tenant, digest.slice(0, 2), digest);
  return { artifacts, path };
}

const big = "tool output line\n".repeat(10_000); // 170,000 bytes
const chunk = (over: Partial<Chunk> & Record<string, unknown>): Chunk =>
  ({
    id: "c1",
    kind: "tool_result",
    createdAt: 1,
    sessionId: "s1",
    toolCallId: "t1",
    name: "grep",
    content: "",
    ...over,
  }) as Chunk;

describe("claim-check offload of chunks", () => {
  it("moves a large tool result to the artifact store, keeps a small stub, and resolves it back equal", async () => {
    const { artifacts } = store();
    const original = chunk({ content: big });
    const stub = await offloadChunk(original, "acme", artifacts);
    const refs = (stub as unknown as Record<string, unknown>)[OFFLOADED_KEY] as {
      path: string[];
      uri: string;
      size: number;
    }[];
    expect((stub as { content: string }).content).toBe("");
    expect(refs).toHaveLength(1);
    expect(refs[0]).toMatchObject({ path: ["content"], size: Buffer.byteLength(big) });
    expect(refs[0]!.uri).toMatch(/^artifact:\/\/acme\/[0-9a-f]{64}$/);
    expect(JSON.stringify(stub).length).toBeLessThan(1000);
    expect(await resolveChunk(stub, artifacts)).toEqual(original);
    expect(offloadedArtifacts(stub)).toEqual([{ tenant: "acme", digest: refs[0]!.uri.slice(-64) }]);
  });

  it("finds large strings anywhere in a chunk: tool-call arguments, event data, arrays", async () => {
    const { artifacts } = store();
    const original = {
      id: "c2",
      kind: "event",
      createdAt: 1,
      sessionId: "s1",
      name: "sandbox.output",
      data: {
        files: [
          { name: "a.txt", text: big },
          { name: "b.txt", text: "small" },
        ],
        log: `${big}!`,
      },
    } as unknown as Chunk;
    const stub = await offloadChunk(original, "acme", artifacts);
    const refs = (stub as unknown as Record<string, { path: unknown[] }[]>)[OFFLOADED_KEY]!;
    expect(refs.map((r) => r.path)).toEqual([
      ["data", "files", 0, "text"],
      ["data", "log"],
    ]);
    expect(
      (original as unknown as { data: { log: string } }).data.log.length,
      "the original was changed",
    ).toBe(big.length + 1);
    expect(await resolveChunk(stub, artifacts)).toEqual(original);
  });

  it("leaves small chunks untouched and counts the threshold in UTF-8 bytes", async () => {
    const { artifacts } = store();
    const small = chunk({ content: "x".repeat(65_535) });
    expect(needsOffload(small)).toBe(false);
    expect(await offloadChunk(small, "acme", artifacts)).toBe(small);
    // 22,000 characters, but 66,000 bytes of UTF-8.
    const wide = chunk({ content: "東".repeat(22_000) });
    expect(needsOffload(wide)).toBe(true);
    const stub = await offloadChunk(wide, "acme", artifacts);
    expect(await resolveChunk(stub, artifacts)).toEqual(wide);
    expect(needsOffload(chunk({ content: "y".repeat(100) }), 50)).toBe(true);
  });

  it("an offloaded string removed behind the store's back is artifact_not_found naming the digest and the chunk", async () => {
    const { artifacts, path } = store();
    const stub = await offloadChunk(chunk({ content: big }), "acme", artifacts);
    const { digest } = offloadedArtifacts(stub)[0]!;
    await unlink(path("acme", digest));
    await expect(resolveChunk(stub, artifacts)).rejects.toMatchObject({
      code: "artifact_not_found",
      details: { tenant: "acme", digest, chunkId: "c1" },
      message: expect.stringContaining(digest),
    });
  });

  it("an offloaded string whose bytes changed is artifact_corrupt, never returned", async () => {
    const { artifacts, path } = store();
    const stub = await offloadChunk(chunk({ content: big }), "acme", artifacts);
    const { digest } = offloadedArtifacts(stub)[0]!;
    await writeFile(path("acme", digest), big.replace("tool", "TOOL"));
    await expect(resolveChunk(stub, artifacts)).rejects.toMatchObject({
      code: "artifact_corrupt",
      details: { digest },
    });
  });

  it("a malformed stub is invalid_argument", async () => {
    const { artifacts } = store();
    const bad = { ...chunk({}), [OFFLOADED_KEY]: [{ path: "content", uri: 7 }] } as unknown as Chunk;
    await expect(resolveChunk(bad, artifacts)).rejects.toMatchObject({ code: "invalid_argument" });
  });
});

describe("collectArtifactGarbage", () => {
  it("deletes unreferenced artifacts past the grace period and keeps referenced and young ones", async () => {
    const { artifacts, path } = store();
    const referenced = await artifacts.put("acme", "referenced");
    const orphan = await artifacts.put("acme", "orphan");
    const young = await artifacts.put("acme", "young orphan");
    const other = await artifacts.put("beta", "orphan");
    const hourAgo = new Date(Date.now() - 3600_000);
    for (const [t, d] of [
      ["acme", referenced.digest],
      ["acme", orphan.digest],
      ["beta", other.digest],
    ] as const) {
      await utimes(path(t, d), hourAgo, hourAgo);
    }
    const asked: string[] = [];
    const references = {
      async referencedArtifacts(tenant: string) {
        asked.push(tenant);
        return new Set(tenant === "acme" ? [referenced.digest] : []);
      },
    };
    const dry = await collectArtifactGarbage({ artifacts, references, graceMs: 60_000, dryRun: true });
    expect(dry.garbage.map((g) => `${g.tenant}/${g.digest}`).sort()).toEqual(
      [`acme/${orphan.digest}`, `beta/${other.digest}`].sort(),
    );
    expect(await artifacts.stat("acme", orphan.digest)).toBeDefined();

    const report = await collectArtifactGarbage({ artifacts, references, graceMs: 60_000 });
    expect(report).toMatchObject({ scanned: 4, referenced: 1, young: 1 });
    expect(report.garbage).toHaveLength(2);
    expect(await artifacts.stat("acme", orphan.digest)).toBeUndefined();
    expect(await artifacts.stat("beta", other.digest)).toBeUndefined();
    expect(await artifacts.stat("acme", referenced.digest)).toBeDefined();
    expect(await artifacts.stat("acme", young.digest)).toBeDefined();
    expect(asked.sort()).toEqual(["acme", "acme", "beta", "beta"]);
  });

  it("an artifact put again after it was listed survives the collection", async () => {
    const { artifacts, path } = store();
    const orphan = await artifacts.put("acme", "put again");
    const hourAgo = new Date(Date.now() - 3600_000);
    await utimes(path("acme", orphan.digest), hourAgo, hourAgo);
    const report = await collectArtifactGarbage({
      artifacts,
      graceMs: 60_000,
      references: {
        // The references are read after the listing: this is where a writer puts the content
        // again (its age restarts) and commits a row that refers to it.
        async referencedArtifacts() {
          await artifacts.put("acme", "put again");
          return new Set<string>();
        },
      },
    });
    expect(report.garbage).toEqual([]);
    expect(await artifacts.stat("acme", orphan.digest)).toBeDefined();
  });

  it("refuses references that cannot answer", async () => {
    const { artifacts } = store();
    await expect(collectArtifactGarbage({ artifacts, references: {} as never })).rejects.toMatchObject({
      code: "invalid_argument",
    });
  });
});
