import { expect, it } from "vitest";

/**
 * A caller's skip list as a suite consults it. Every title asked about is remembered, so the
 * suite can report keys that name no group or test (a typo would otherwise skip nothing, silently).
 */
export interface SkipList {
  /** Every title (group, test, or `"<group> > <test>"`) the suite has asked about so far. */
  readonly asked: ReadonlySet<string>;
  /** The caller's reason for skipping `title`, or `undefined`; remembers that `title` was asked. */
  skipped(title: string): string | undefined;
}

/** Wraps the caller's `skip` option (title → reason). */
export function createSkipList(skip: Readonly<Record<string, string>> = {}): SkipList {
  const asked = new Set<string>();
  return {
    asked,
    skipped(title: string) {
      asked.add(title);
      return Object.hasOwn(skip, title) ? skip[title] : undefined;
    },
  };
}

/**
 * Registers the test that fails when a key of the caller's `skip` option names no group or test
 * of the suite. Call it inside the suite's `describe`, after every group is registered.
 */
export function checkSkipKeys(skip: Readonly<Record<string, string>> | undefined, list: SkipList): void {
  const keys = Object.keys(skip ?? {});
  if (keys.length === 0) return;
  it("every skip key names a group or a test of the suite", () => {
    const unknown = keys.filter((key) => !list.asked.has(key));
    const valid = [...list.asked].filter((key) => key.includes(" > "));
    expect(
      unknown,
      `skip keys that name no group or test: ${JSON.stringify(unknown)}. A key is a group title, a test title, or one of:\n${valid.join("\n")}`,
    ).toEqual([]);
  });
}
