/** Where the CLI writes: `process.stdout`, `process.stderr`, or a capture in tests. */
export interface OutputStream {
  write(text: string): unknown;
  /** Whether this is a terminal (spinners and colour only go to terminals). */
  readonly isTTY?: boolean;
  /** Terminal width in characters, when known. */
  readonly columns?: number;
}
