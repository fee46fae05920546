// Starts the real services the test suite talks to and returns the environment variables that
// point the tests at them. Each service is installed from Debian's packages when missing (the
// machine is fresh in CI) and started on loopback only. With `required`, a service that cannot be
// started is an error; otherwise the tests that need it skip with the reason.
import { execFileSync, spawnSync } from "node:child_process";

let aptUpdated = false;

/** Whether `command` is on PATH. */
export function have(command) {
  return spawnSync("sh", ["-c", `command -v ${command}`], { stdio: "ignore" }).status === 0;
}

/** Installs Debian packages (as root, once per run `apt-get update` first). */
export function aptInstall(...packages) {
  if (process.getuid?.() !== 0) throw new Error(`not root, cannot apt-get install ${packages.join(" ")}`);
  const env = { ...process.env, DEBIAN_FRONTEND: "noninteractive" };
  if (!aptUpdated) {
    execFileSync("apt-get", ["update", "-qq"], { stdio: ["ignore", "ignore", "inherit"], env });
    aptUpdated = true;
  }
  execFileSync("apt-get", ["install", "-y", "-qq", "--no-install-recommends", ...packages], {
    stdio: ["ignore", "ignore", "inherit"],
    env,
  });
}

/** Services the suite needs, by name: each installs/starts its service and returns env for the tests. */
const SERVICES = {
  /** bubblewrap, for the local sandbox's isolated mode. */
  async bubblewrap() {
    if (!have("bwrap")) aptInstall("bubblewrap");
    const probe = spawnSync("bwrap", ["--ro-bind", "/", "/", "--unshare-net", "--dev", "/dev", "true"], { encoding: "utf8" });
    if (probe.status !== 0) throw new Error(`bwrap cannot create a sandbox here: ${probe.stderr.trim()}`);
    return { OPENRATH_TEST_BWRAP: "1" };
  },
};

/**
 * @param {{ root: string, required: boolean }} options
 * @returns {Promise<Record<string, string>>} environment for the test run
 */
export async function ensureServices({ root, required }) {
  const env = {};
  for (const [name, start] of Object.entries(SERVICES)) {
    try {
      Object.assign(env, await start({ root }));
    } catch (error) {
      if (required) throw new Error(`${name} could not be started: ${error.message}`);
      process.stderr.write(`! ${name} unavailable (${error.message}); tests that need it will skip\n`);
    }
  }
  return env;
}
