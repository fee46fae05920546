import type { MemoryScope, MemoryV1 } from "@openrath/core";

/** The scope the crash writer stores at and the suite checks. */
export const CRASH_SCOPE: MemoryScope = { tenant: "crash-test", user: "writer" };

/** The id and text of the crash writer's entry number `i`. */
export function crashEntry(i: number): { readonly id: string; readonly text: string } {
  return { id: `survivor-${i}`, text: `survivor entry ${i} was acknowledged before the crash` };
}

/**
 * The body of the child process the memory conformance suite kills with SIGKILL (see the
 * `crashWriter` option of `describeMemoryConformance`): opens the store, prints `ready`, then
 * remembers entries one at a time, each awaited, printing `ack <id>` after each call resolves, as
 * fast as it can, and then waits to be killed. It never closes the store: the suite checks that
 * every acknowledged entry is there after the kill.
 *
 * @example
 * ```ts
 * // src/testing/crash-writer.ts, run as `node --import tsx src/testing/crash-writer.ts`
 * import { runMemoryWriter } from "@openrath/testing/memory-writer";
 * await runMemoryWriter(() => acmeMemory().open({ dir: process.env.ACME_DIR! }));
 * ```
 */
export async function runMemoryWriter(
  open: () => Promise<MemoryV1>,
  options: { readonly entries?: number } = {},
): Promise<void> {
  const memory = await open();
  process.stdout.write("ready\n");
  const total = options.entries ?? 5_000;
  for (let i = 0; i < total; i++) {
    const { id, text } = crashEntry(i);
    await memory.remember({ id, text, scope: CRASH_SCOPE });
    process.stdout.write(`ack ${id}\n`);
  }
  process.stdout.write("done\n");
  await new Promise(() => {});
}
