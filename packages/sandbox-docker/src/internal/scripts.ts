/**
 * Shell scripts the sandbox runs inside the container for what the Engine API cannot do itself.
 * They use only POSIX sh and tools every image with a shell has (busybox, coreutils, procps-free),
 * and take their inputs as positional arguments, never spliced into the script text.
 */

/**
 * The first of the group ids commands run with: every command gets a primary gid of its own
 * (`KILL_GROUP_BASE + n`). A process cannot change its gids without CAP_SETGID, which every
 * sandbox drops (and `no-new-privileges` makes setgid programs inert), so every descendant of a
 * command, whatever it does — setsid, a cleared environment, SIGTERM ignored — keeps that gid and
 * is found by it.
 */
export const KILL_GROUP_BASE = 0x6f000000;

/**
 * PID 1 of every sandbox container: sleeps forever, reaps orphans (`wait` takes any child,
 * adopted ones included, so killed process trees leave no zombies eating the pids limit) and
 * exits at once on SIGTERM.
 */
export const KEEP_ALIVE = "trap 'exit 0' TERM INT; while :; do sleep 3600 & wait; done";

/**
 * Run at open as the sandbox user: `$1` the workspace. Prints `ok` when the workspace is a
 * writable directory (else `missing-workspace`), then its real path, the uid and gid, the
 * deepest existing ancestor of the workspace (where the archive that creates it is put), and
 * `missing <program>` for each further argument that is not on PATH.
 */
export const SETUP = `
w=$1; shift
if [ -d "$w" ] && [ -w "$w" ]; then echo ok; else echo missing-workspace; fi
readlink -f "$w" 2>/dev/null || realpath "$w" 2>/dev/null || echo "$w"
id -u; id -g
a=$w; [ -d "$w" ] && a=\${w%/*}; while [ -n "$a" ] && [ ! -d "$a" ]; do a=\${a%/*}; done; echo "\${a:-/}"
for c; do command -v "$c" >/dev/null 2>&1 || echo "missing $c"; done
`;

/**
 * Resolves a path the way the kernel would, so symlinks that leave the workspace are caught.
 * Used by `listFiles` only (the other file operations resolve through the archive API, without an
 * exec). Arguments: `$1` mode (`l` list, `L` list recursively), `$2` the real workspace path, `$3`
 * the absolute path asked for.
 *
 * Prints three NUL-terminated fields — type (`d` directory, `f` file, `o` other, `n` missing, `N`
 * missing under something that is not a directory, `loop` unresolvable), the resolved absolute
 * path, `x` when the file is executable — then, only when the resolved path is inside the
 * workspace: one `<hex mode>:<size>:./<path>` line per entry of the directory.
 */
export const RESOLVE = `
m=$1 W=$2 p=$3
a=$p s=
while [ ! -e "$a" ] && [ ! -L "$a" ]; do s="/\${a##*/}$s"; a=\${a%/*}; [ -n "$a" ] || a=/; done
r=$(readlink -f "$a" 2>/dev/null || realpath "$a" 2>/dev/null) || { printf 'loop\\000%s\\000\\000' "$p"; exit 0; }
t=n
if [ -z "$s" ]; then
  if [ -d "$r" ]; then t=d; elif [ -f "$r" ]; then t=f; elif [ -e "$r" ]; then t=o; fi
elif [ ! -d "$r" ]; then
  t=N
fi
[ "$r" = / ] && r=
r=$r$s
[ -n "$r" ] || r=/
x=
[ "$t" = f ] && [ -x "$r" ] && x=x
printf '%s\\000%s\\000%s\\000' "$t" "$r" "$x"
case "$r" in "$W"|"$W"/*) ;; *) exit 0 ;; esac
case "$m" in
l)
  if [ "$t" = d ]; then cd "$r" && find . -mindepth 1 -maxdepth 1 -exec stat -c '%f:%s:%n' {} + 2>/dev/null; fi ;;
L)
  if [ "$t" = d ]; then cd "$r" && find . -mindepth 1 -exec stat -c '%f:%s:%n' {} + 2>/dev/null; fi ;;
esac
exit 0
`;

/**
 * Kills every process of one command, run as the sandbox user after a timeout or an abort: `$1`
 * is the command's group id (see {@link KILL_GROUP_BASE}). It SIGKILLs every process whose real
 * gid is that one, in passes until one finds nothing (a process may fork while a pass runs).
 * Same uid, so no capability is needed to signal them.
 */
export const KILL_TREE = `
me=$$ n=0 found=1
while [ $found = 1 ] && [ $n -lt 20 ]; do
  found=0 n=$((n + 1))
  for d in /proc/[0-9]*; do
    p=\${d#/proc/}
    [ "$p" = 1 ] || [ "$p" = "$me" ] && continue
    g=; { while read -r k v _; do [ "$k" = Gid: ] && { g=$v; break; }; done < "$d/status"; } 2>/dev/null
    if [ "$g" = "$1" ]; then kill -s KILL "$p" 2>/dev/null && found=1; fi
  done
done
exit 0
`;
