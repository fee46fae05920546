import { describe, expect, it } from "vitest";
import { accountFiles, bwrapArgs, sandboxIds } from "./bwrap-args.js";

describe("bwrapArgs", () => {
  const args = bwrapArgs({
    workspace: "/tmp/ws",
    tmp: "/tmp/run/tmp",
    passwd: "/tmp/run/passwd",
    group: "/tmp/run/group",
    uid: 1000,
    gid: 1000,
  });
  const at = (...parts: string[]) => args.findIndex((_, i) => parts.every((part, j) => args[i + j] === part));

  it("unshares every namespace, drops capabilities, clears the environment and dies with its parent", () => {
    for (const flag of [
      "--unshare-all",
      "--unshare-user",
      "--die-with-parent",
      "--new-session",
      "--clearenv",
    ]) {
      expect(args).toContain(flag);
    }
    expect(at("--cap-drop", "ALL")).toBeGreaterThan(-1);
    expect(args).not.toContain("--share-net");
  });

  it("binds an allow-list, never the host root", () => {
    expect(at("--ro-bind", "/", "/")).toBe(-1);
    expect(at("--bind", "/", "/")).toBe(-1);
    expect(at("--ro-bind", "/usr", "/usr")).toBeGreaterThan(-1);
    expect(at("--ro-bind", "/tmp/run/passwd", "/etc/passwd")).toBeGreaterThan(-1);
    // Nothing of /etc but the listed entries: no shadow, no host accounts.
    expect(args.filter((a) => a.startsWith("/etc/")).every((a) => !/shadow|sudoers|ssh/.test(a))).toBe(true);
  });

  it("puts fresh tmpfs over the places holding sockets and homes, before the workspace and /tmp", () => {
    for (const path of ["/run", "/home", "/root", "/var/tmp"]) {
      const tmpfs = at("--tmpfs", path);
      expect(tmpfs, path).toBeGreaterThan(-1);
      expect(tmpfs).toBeLessThan(at("--bind", "/tmp/ws", "/tmp/ws"));
    }
    expect(at("--symlink", "../run", "/var/run")).toBeGreaterThan(-1);
    expect(at("--bind", "/tmp/run/tmp", "/tmp")).toBeLessThan(at("--bind", "/tmp/ws", "/tmp/ws"));
    expect(args.slice(-2)).toEqual(["--remount-ro", "/"]);
  });
});

describe("sandbox accounts", () => {
  it("never maps root: a root host runs its sandboxes as 1000", () => {
    expect(sandboxIds(0, 0)).toEqual({ uid: 1000, gid: 1000 });
    expect(sandboxIds(1234, 99)).toEqual({ uid: 1234, gid: 99 });
  });

  it("lists the sandbox user with the workspace as home, and no host account", () => {
    const { passwd, group } = accountFiles({ uid: 1000, gid: 1000 }, "/sandbox-home");
    expect(passwd).toContain("sandbox:x:1000:1000:sandbox:/sandbox-home:/bin/sh");
    expect(passwd.trim().split("\n")).toHaveLength(3);
    expect(group).toContain("sandbox:x:1000:");
  });
});
