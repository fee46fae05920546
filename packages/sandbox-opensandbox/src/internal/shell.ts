/** Quotes one word for a POSIX shell: safe words stay as they are, others go in single quotes. */
export function shellQuote(word: string): string {
  if (word !== "" && /^[A-Za-z0-9_@%+=:,./-]+$/.test(word)) return word;
  return `'${word.replace(/'/g, `'\\''`)}'`;
}

/**
 * An argv as one shell command line that runs exactly that argv. The program name is always
 * quoted, so `FOO=1` or `if` run as programs rather than as an assignment or a keyword.
 */
export function shellJoin(argv: readonly string[]): string {
  return argv.map((word, i) => (i === 0 ? `'${word.replace(/'/g, `'\\''`)}'` : shellQuote(word))).join(" ");
}
