/** Snippets the suite runs in one language. */
export interface CodeSnippets {
  /** Prints `2` and a newline. */
  readonly print: string;
  /** Fails at run time with an error whose text contains `boom`. */
  readonly fail: string;
  /** Runs for 30 seconds. */
  readonly sleep: string;
  /** Prints `$CONFORMANCE_VAR` and a newline. */
  readonly env: string;
  /** Prints the contents of `code-input.txt` (read relative to the working directory) and a newline. */
  readonly read: string;
}

const python: CodeSnippets = {
  print: "print(1+1)",
  fail: 'raise ValueError("boom")',
  sleep: "import time\ntime.sleep(30)",
  env: 'import os\nprint(os.environ["CONFORMANCE_VAR"])',
  read: 'print(open("code-input.txt").read())',
};

const javascript: CodeSnippets = {
  print: "console.log(1+1)",
  fail: 'throw new Error("boom")',
  sleep: "setTimeout(() => {}, 30000)",
  env: "console.log(process.env.CONFORMANCE_VAR)",
  read: 'import("node:fs").then((fs) => console.log(fs.readFileSync("code-input.txt", "utf8")))',
};

const shell: CodeSnippets = {
  print: "echo $((1+1))",
  fail: "echo boom >&2; exit 3",
  sleep: "sleep 30",
  env: 'echo "$CONFORMANCE_VAR"',
  read: "cat code-input.txt; echo",
};

/**
 * Snippets by language name, as a capability manifest lists them. A language the suite has no
 * snippets for is still checked to be accepted (not refused with `unsupported_language`).
 */
export const CODE_SNIPPETS: Readonly<Record<string, CodeSnippets>> = {
  python,
  python3: python,
  javascript,
  js: javascript,
  node: javascript,
  typescript: javascript,
  ts: javascript,
  bash: shell,
  sh: shell,
  shell,
  ruby: {
    print: "puts 1+1",
    fail: 'raise "boom"',
    sleep: "sleep 30",
    env: 'puts ENV["CONFORMANCE_VAR"]',
    read: 'puts File.read("code-input.txt")',
  },
  perl: {
    print: 'print 1+1, "\\n";',
    fail: 'die "boom\\n";',
    sleep: "sleep 30;",
    env: 'print "$ENV{CONFORMANCE_VAR}\\n";',
    read: 'open(my $f, "<", "code-input.txt") or die; local $/; print <$f>, "\\n";',
  },
};
