// Starts the real services the test suite talks to and returns the environment variables that
// point the tests at them. Each service is installed from Debian's packages when missing (the
// machine is fresh in CI) and started on loopback only. With `required`, a service that cannot be
// started is an error; otherwise the tests that need it skip with the reason.

/** Services the suite needs, by name. Later planes add PostgreSQL, Redis, Docker, S3 and MCP servers. */
const SERVICES = {};

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
