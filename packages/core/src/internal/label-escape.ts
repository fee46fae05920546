/**
 * Escaping for the text that lineage exports put in labels. Operators, ops and ids come from
 * callers and from restored JSON, so any of them may hold a newline, a Mermaid comment marker
 * (`%%`), quotes, brackets, terminal control sequences or bidirectional overrides.
 */

/** Characters a Mermaid label keeps as they are: letters, digits, space and inert punctuation. */
const MERMAID_SAFE = /^[\p{L}\p{N} _.,:()/+\-·@=]$/u;

/**
 * `text` for inside a double-quoted Mermaid label: every character outside a small safe set
 * (letters, digits, space, `_.,:()/+-·@=`) becomes a numeric entity code (`#37;` for `%`,
 * `#10;` for a newline, `#35;` for `#`), which Mermaid renders as the character itself.
 */
export function mermaidText(text: string): string {
  let out = "";
  for (const ch of text) out += MERMAID_SAFE.test(ch) ? ch : `#${ch.codePointAt(0)};`;
  return out;
}

/**
 * C0 and C1 controls (newline and ESC included), line and paragraph separators, bidirectional
 * marks and overrides, and lone surrogates.
 */
const TERMINAL_UNSAFE =
  // biome-ignore lint/suspicious/noControlCharactersInRegex: matching control characters is the point.
  /[\u0000-\u001f\u007f-\u009f\u2028\u2029\u200e\u200f\u202a-\u202e\u2066-\u2069]|[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/g;

/**
 * `text` safe to print on one terminal line: controls, separators, bidirectional overrides and
 * lone surrogates become visible `\u{…}` escapes (a newline is `\u{a}`, ESC `\u{1b}`).
 */
export function terminalText(text: string): string {
  return text.replace(TERMINAL_UNSAFE, (ch) => `\\u{${ch.codePointAt(0)!.toString(16)}}`);
}

/** `text` for inside a double-quoted Graphviz label: {@link terminalText}, then `\` and `"` escaped. */
export function dotText(text: string): string {
  return terminalText(text).replace(/\\/g, "\\\\").replace(/"/g, '\\"');
}
