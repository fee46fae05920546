import { lstatSync, readlinkSync } from "node:fs";

/** What {@link bwrapArgs} puts in the sandbox. */
export interface BwrapLayout {
  /** The workspace's real path, bound read-write at the same path. */
  readonly workspace: string;
  /** A host directory private to the sandbox, bound read-write as `/tmp`. */
  readonly tmp: string;
  /** Generated `/etc/passwd` and `/etc/group` (the sandbox user only, no host accounts). */
  readonly passwd: string;
  readonly group: string;
  /** uid and gid commands run as inside (never 0: see {@link sandboxIds}). */
  readonly uid: number;
  readonly gid: number;
  /** Host directories bound read-only at the same path besides the system ones (the Node.js install). */
  readonly extraReadOnly?: readonly string[];
}

/**
 * Top-level system directories commands need: bound read-only when they are directories,
 * recreated as the same symlink when they are links (merged-/usr systems).
 */
const SYSTEM_DIRS = ["usr", "bin", "sbin", "lib", "lib32", "lib64", "libx32"] as const;

/**
 * Entries of the host's `/etc` that programs read to run at all (the dynamic loader, time zones,
 * certificates, name-service and alternatives). Nothing else of `/etc` is visible: no shadow, no
 * host accounts (passwd and group are generated), no service configuration.
 */
const ETC_ALLOWED = [
  "alternatives",
  "bash.bashrc",
  "ca-certificates",
  "ca-certificates.conf",
  "debian_version",
  "gai.conf",
  "host.conf",
  "hosts",
  "inputrc",
  "ld.so.cache",
  "ld.so.conf",
  "ld.so.conf.d",
  "locale.alias",
  "localtime",
  "lsb-release",
  "magic",
  "mime.types",
  "nsswitch.conf",
  "os-release",
  "perl",
  "profile",
  "protocols",
  "python3",
  "services",
  "ssl",
  "timezone",
] as const;

/** Places that may hold host sockets, host state or user data: each gets a fresh, empty tmpfs. */
const FRESH_TMPFS = ["/run", "/home", "/root", "/var/tmp", "/mnt", "/media", "/srv", "/opt"] as const;

/**
 * The uid and gid inside the sandbox: the host's own, or 1000 when the host runs as root. Never
 * 0: a nested user namespace (one per command) may only map a non-root parent id without
 * capabilities, and a root uid would keep capabilities across `exec` in it.
 */
export function sandboxIds(hostUid: number, hostGid: number): { uid: number; gid: number } {
  return { uid: hostUid === 0 ? 1000 : hostUid, gid: hostGid === 0 ? 1000 : hostGid };
}

/** Read-only binds (or the same symlinks) of the host's system directories. */
export function systemDirArgs(): string[] {
  const args: string[] = [];
  for (const name of SYSTEM_DIRS) {
    const path = `/${name}`;
    try {
      const stats = lstatSync(path);
      if (stats.isSymbolicLink()) args.push("--symlink", readlinkSync(path), path);
      else if (stats.isDirectory()) args.push("--ro-bind", path, path);
    } catch {
      // Not on this host (lib32, libx32 on most).
    }
  }
  return args;
}

/**
 * The bubblewrap arguments of one sandbox (a long-lived namespace that all its commands share;
 * each command then gets its own PID namespace inside it). An allow-list, not a read-only view of
 * the host: the root is an empty tmpfs (remounted read-only at the end) holding only
 *
 * - read-only binds of the system directories (`/usr`, `/bin`, `/lib*`, `/sbin`) and of a short
 *   list of `/etc` entries, plus generated `/etc/passwd` and `/etc/group`;
 * - fresh `/dev` and `/proc` (of the sandbox's own PID namespace: no host process is visible);
 * - fresh tmpfs over `/run` (with `/var/run` a link to it), `/home`, `/root`, `/var/tmp`, `/mnt`,
 *   `/media`, `/srv` and `/opt`, so no host socket, home directory or service state is reachable
 *   (a read-only bind would not stop `connect()` on a socket: only leaving it out does);
 * - the sandbox's private `/tmp` and the workspace, read-write.
 *
 * Every namespace is unshared (user, PID, network — only a loopback interface, so no host port
 * and no abstract Unix socket either —, IPC, UTS, cgroup), every capability dropped, a new session
 * (no TIOCSTI into the caller's terminal), and `--die-with-parent` ends the sandbox when its
 * owner dies, even by SIGKILL.
 */
export function bwrapArgs(layout: BwrapLayout): string[] {
  const args = [
    "--unshare-all",
    "--unshare-user",
    "--uid",
    String(layout.uid),
    "--gid",
    String(layout.gid),
    "--hostname",
    "openrath",
    "--die-with-parent",
    "--new-session",
    "--cap-drop",
    "ALL",
    "--clearenv",
    ...systemDirArgs(),
    "--dir",
    "/etc",
    ...ETC_ALLOWED.flatMap((name) => ["--ro-bind-try", `/etc/${name}`, `/etc/${name}`]),
    "--ro-bind",
    layout.passwd,
    "/etc/passwd",
    "--ro-bind",
    layout.group,
    "/etc/group",
    "--dev",
    "/dev",
    "--proc",
    "/proc",
    ...FRESH_TMPFS.flatMap((path) => ["--tmpfs", path]),
    "--dir",
    "/var",
    "--symlink",
    "../run",
    "/var/run",
    ...(layout.extraReadOnly ?? []).flatMap((path) => ["--ro-bind", path, path]),
    // After the fresh tmpfs mounts: a workspace under /tmp or /home must stay visible.
    "--bind",
    layout.tmp,
    "/tmp",
    "--bind",
    layout.workspace,
    layout.workspace,
    "--remount-ro",
    "/",
  ];
  return args;
}

/** The generated account files: the sandbox user (home = the workspace), root and nobody. */
export function accountFiles(
  ids: { uid: number; gid: number },
  home: string,
): { passwd: string; group: string } {
  return {
    passwd: [
      "root:x:0:0:root:/root:/bin/sh",
      `sandbox:x:${ids.uid}:${ids.gid}:sandbox:${home.replace(/[:\n]/g, "_")}:/bin/sh`,
      "nobody:x:65534:65534:nobody:/nonexistent:/usr/sbin/nologin",
      "",
    ].join("\n"),
    group: ["root:x:0:", `sandbox:x:${ids.gid}:`, "nogroup:x:65534:", ""].join("\n"),
  };
}
