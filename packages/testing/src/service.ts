/** The outcome of {@link serviceAvailable}. */
export interface ServiceCheck {
  /** Whether the tests that need the service should run. */
  readonly available: boolean;
  /** Why not, for `describe.skipIf(...)` messages. */
  readonly reason: string;
}

/**
 * Decides whether tests that need a real service (Docker, PostgreSQL, bubblewrap…) run. `probe`
 * returns true when the service answers. When the environment sets `OPENRATH_REQUIRE_SERVICES`
 * (the full suite under `CI=true` does), a missing service throws instead of skipping, so CI never
 * passes by silently skipping what it was meant to test.
 *
 * @example
 * ```ts
 * const docker = await serviceAvailable("docker", () => pingDocker());
 * describe.skipIf(!docker.available)(`docker sandbox (${docker.reason})`, () => { ... });
 * ```
 */
export async function serviceAvailable(
  name: string,
  probe: () => boolean | Promise<boolean>,
): Promise<ServiceCheck> {
  let ok = false;
  let why = "";
  try {
    ok = await probe();
  } catch (error) {
    why = (error as Error).message;
  }
  if (ok) return { available: true, reason: `${name} available` };
  const reason = `${name} unavailable${why ? `: ${why}` : ""}`;
  const required = process.env.OPENRATH_REQUIRE_SERVICES;
  if (required && required !== "0") {
    throw new Error(`${reason}. OPENRATH_REQUIRE_SERVICES is set, so this fails instead of skipping.`);
  }
  return { available: false, reason };
}
