// Measuring and reporting helpers shared by the benches: stdout carries exactly one JSON line per
// case so the output can be piped into tools; progress goes to stderr.

/** A progress writer for one bench: `progress("warm-up")` prints `<bench>: warm-up` on stderr. */
export function progressFor(bench: string): (message: string) => void {
  return (message) => {
    process.stderr.write(`${bench}: ${message}\n`);
  };
}

/** Writes one result as one JSON line on stdout. */
export function emit(result: Record<string, unknown>): void {
  process.stdout.write(`${JSON.stringify(result)}\n`);
}

/** Microseconds since `start`, a `process.hrtime.bigint()` reading. */
export function elapsedUs(start: bigint): number {
  return Number(process.hrtime.bigint() - start) / 1000;
}

/** The `q` quantile (0 to 1) of `values`, as the nearest rank at or below it. */
export function quantile(values: readonly number[], q: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))]!;
}

export const median = (values: readonly number[]) => quantile(values, 0.5);
export const round = (value: number, digits = 3) => Number(value.toFixed(digits));
