import { describe, expect, it } from "vitest";
import { bwrapArgs } from "./bwrap-args.js";

describe("bwrapArgs", () => {
  const args = bwrapArgs({
    workspace: "/tmp/ws",
    tmp: "/tmp/run/tmp",
    cwd: "/tmp/ws/sub",
    command: ["python3", "-u", "/tmp/.openrath-code-1.py"],
  });
  const at = (...parts: string[]) => args.findIndex((_, i) => parts.every((part, j) => args[i + j] === part));

  it("unshares every namespace, drops capabilities and dies with its parent", () => {
    expect(args.slice(0, 5)).toEqual([
      "--die-with-parent",
      "--unshare-all",
      "--new-session",
      "--cap-drop",
      "ALL",
    ]);
  });

  it("binds the root read-only, then the sandbox's /tmp, then the workspace", () => {
    const root = at("--ro-bind", "/", "/");
    const tmp = at("--bind", "/tmp/run/tmp", "/tmp");
    const workspace = at("--bind", "/tmp/ws", "/tmp/ws");
    expect(root).toBeGreaterThan(-1);
    expect(at("--dev", "/dev")).toBeGreaterThan(root);
    expect(at("--proc", "/proc")).toBeGreaterThan(root);
    // Later mounts shadow earlier ones: a workspace under /tmp must come after /tmp.
    expect(tmp).toBeGreaterThan(root);
    expect(workspace).toBeGreaterThan(tmp);
    expect(args).not.toContain("--share-net");
  });

  it("changes into the cwd and ends with the command after --", () => {
    expect(args.slice(-6)).toEqual([
      "--chdir",
      "/tmp/ws/sub",
      "--",
      "python3",
      "-u",
      "/tmp/.openrath-code-1.py",
    ]);
  });
});
