/** The size of each large chunk a `bulky` run writes: offloaded to the artifact store on commit. */
export const BULK_BYTES = 2 * 1024 * 1024;

/** The content of step `n`'s chunk in the run whose input is `input` (a drill recomputes it to compare). */
export function bulk(input: string, n: number): string {
  const head = `${input}#${n}:`;
  return (
    head + "abcdefghij".repeat(Math.ceil((BULK_BYTES - head.length) / 10)).slice(0, BULK_BYTES - head.length)
  );
}
