import {
  closeAllSandboxes,
  createRegistry,
  OpenRathError,
  type SandboxBackendV1,
  type SandboxV1,
  Session,
} from "@openrath/core";
import { describe, expect, it } from "vitest";

/** A backend that counts opens and closes; the sandboxes do nothing else (core's bookkeeping is under test). */
function counting(options: { failOpens?: number; openDelayMs?: number } = {}) {
  const stats = { opened: 0, closed: 0, attempts: 0 };
  let failures = options.failOpens ?? 0;
  const backend: SandboxBackendV1 = {
    kind: "sandbox",
    key: "counting",
    specVersion: "v1",
    capabilities: {
      streaming: false,
      stdin: false,
      network: "none",
      isolation: "process",
      snapshots: false,
      languages: [],
    },
    async open(spec) {
      stats.attempts++;
      if (options.openDelayMs) await new Promise((r) => setTimeout(r, options.openDelayMs));
      if (failures-- > 0) throw new Error("open failed");
      stats.opened++;
      const id = `sb-${stats.opened}`;
      let closed = false;
      return {
        id,
        workspace: "/w",
        spec,
        async close() {
          if (!closed) stats.closed++;
          closed = true;
        },
      } as unknown as SandboxV1;
    },
  };
  return { stats, registry: createRegistry({ sandboxes: [backend] }) };
}

const place = (registry: ReturnType<typeof counting>["registry"], spec: unknown = { n: 1 }) =>
  Session.fromUserMessage("task").to("counting" as never, spec as never, { registry });

describe("session placement", () => {
  it("opens nothing until a tool asks for the sandbox", async () => {
    const { stats, registry } = counting();
    const placed = place(registry);
    expect(placed.placement).toEqual({ key: "counting", spec: { n: 1 } });
    expect(stats.attempts).toBe(0);
    const sandbox = await placed.sandbox();
    expect(sandbox.id).toBe("sb-1");
    expect(stats.opened).toBe(1);
  });

  it("opens once when many first uses race", async () => {
    const { stats, registry } = counting({ openDelayMs: 20 });
    const placed = place(registry);
    const fork = placed.fork();
    const all = await Promise.all([
      placed.sandbox(),
      placed.sandbox(),
      fork.sandbox(),
      fork.append({ kind: "user", content: "x" }).sandbox(),
    ]);
    expect(new Set(all.map((s) => s.id))).toEqual(new Set(["sb-1"]));
    expect(stats.attempts).toBe(1);
  });

  it("shares the sandbox with forks, merges, detached and derived sessions and closes after the last release", async () => {
    const { stats, registry } = counting();
    const parent = place(registry);
    const a = parent.fork();
    const b = parent.fork();
    const merged = a.merge(b);
    const detached = parent.detach();
    const derived = parent.derive({ op: "loop", operator: "agent" });
    const ids = await Promise.all([parent, a, b, merged, detached, derived].map((s) => s.sandbox()));
    expect(new Set(ids.map((s) => s.id)).size).toBe(1);
    for (const s of [parent, a, b, merged, detached]) {
      await s.release();
      expect(stats.closed).toBe(0);
    }
    await derived.release();
    expect(stats.closed).toBe(1);
  });

  it("treats every version of one session as one holder", async () => {
    const { stats, registry } = counting();
    const v1 = place(registry);
    const v2 = v1.append({ kind: "user", content: "more" });
    const fork = v1.fork();
    await v1.sandbox();
    await v2.release();
    await v2.release();
    expect(stats.closed).toBe(0);
    await fork.release();
    expect(stats.closed).toBe(1);
  });

  it("refuses a released session and an unplaced one with clear codes", async () => {
    const { registry } = counting();
    const placed = place(registry);
    await placed.release();
    await expect(placed.sandbox()).rejects.toSatisfy((e) => OpenRathError.isInstance(e, "sandbox_closed"));
    await expect(Session.empty().sandbox()).rejects.toSatisfy(
      (e) => OpenRathError.isInstance(e, "not_placed") && /\.to\("local"\)/.test((e as Error).message),
    );
    await expect(Session.empty().release()).resolves.toBeUndefined();
  });

  it("retries an open that failed instead of caching the failure", async () => {
    const { stats, registry } = counting({ failOpens: 1 });
    const placed = place(registry);
    await expect(placed.sandbox()).rejects.toThrow("open failed");
    await expect(placed.sandbox()).resolves.toMatchObject({ id: "sb-1" });
    expect(stats.attempts).toBe(2);
  });

  it("re-placing makes a new placement and leaves the earlier version's sandbox to the earlier version", async () => {
    const { stats, registry } = counting();
    const first = place(registry, { n: 1 });
    const old = await first.sandbox();
    const moved = first.to("counting" as never, { n: 2 } as never, { registry });
    expect((await moved.sandbox()).id).toBe("sb-2");
    expect((await first.sandbox()).id).toBe(old.id);
    expect(stats.closed).toBe(0);
    await first.release();
    expect(stats.closed).toBe(1);
    await moved.release();
    expect(stats.closed).toBe(2);
  });

  it("a session restored from JSON opens through the registry it is given", async () => {
    const { stats, registry } = counting();
    const json = JSON.parse(JSON.stringify(place(registry, { n: 7 }).toJSON()));
    const restored = Session.fromJSON(json, { registry });
    expect(restored.placement).toEqual({ key: "counting", spec: { n: 7 } });
    await restored.sandbox();
    expect(stats.opened).toBe(1);
  });

  it("closeAllSandboxes closes what is still held", async () => {
    const { stats, registry } = counting();
    await place(registry).sandbox();
    await place(registry).sandbox();
    await closeAllSandboxes();
    expect(stats.closed).toBe(2);
  });
});
