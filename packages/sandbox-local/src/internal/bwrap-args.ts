/** What {@link bwrapArgs} puts in the sandbox. */
export interface BwrapLayout {
  /** The workspace's real path, bound read-write at the same path. */
  readonly workspace: string;
  /** A host directory private to the sandbox, bound read-write as `/tmp`. */
  readonly tmp: string;
  /** The working directory inside (a real path within the workspace). */
  readonly cwd: string;
  /** The command and its arguments. */
  readonly command: readonly string[];
}

/**
 * The bubblewrap arguments of one command: every namespace unshared (no network), a new session
 * (no TIOCSTI into the caller's terminal), every capability dropped (a root caller would otherwise
 * keep CAP_SYS_ADMIN and could remount the root read-write), the host root read-only, fresh `/dev`
 * and `/proc`, the sandbox's own `/tmp` (private to it, kept across its commands), then the
 * workspace read-write. `--die-with-parent` kills the sandbox when the bwrap process dies, so
 * killing its process group kills the whole tree.
 */
export function bwrapArgs(layout: BwrapLayout): string[] {
  return [
    "--die-with-parent",
    "--unshare-all",
    "--new-session",
    "--cap-drop",
    "ALL",
    "--ro-bind",
    "/",
    "/",
    "--dev",
    "/dev",
    "--proc",
    "/proc",
    // Bound after the root and before the workspace: a workspace under /tmp must stay visible.
    "--bind",
    layout.tmp,
    "/tmp",
    "--bind",
    layout.workspace,
    layout.workspace,
    "--chdir",
    layout.cwd,
    "--",
    ...layout.command,
  ];
}
