import { OpenRathError } from "@openrath/core";
import { describe, expect, it } from "vitest";
import type { LocalSandboxOptions } from "../local-sandbox.js";
import { parseLocalOptions } from "./parse-local-options.js";

describe("parseLocalOptions", () => {
  it("fills in the defaults", () => {
    expect(parseLocalOptions({})).toEqual({
      isolation: "none",
      bwrapPath: "bwrap",
      maxOutputBytes: undefined,
    });
  });

  it("keeps valid options", () => {
    expect(
      parseLocalOptions({ isolation: "bubblewrap", bwrapPath: "/usr/bin/bwrap", maxOutputBytes: 0 }),
    ).toEqual({
      isolation: "bubblewrap",
      bwrapPath: "/usr/bin/bwrap",
      maxOutputBytes: 0,
    });
  });

  it.each<[string, unknown]>([
    ["isolation", "vm"],
    ["bwrapPath", ""],
    ["maxOutputBytes", -1],
    ["maxOutputBytes", 1.5],
    ["timeout", 5],
  ])("refuses %s = %j with invalid_argument naming the field", (field, value) => {
    try {
      parseLocalOptions({ [field]: value } as LocalSandboxOptions);
      expect.fail("expected a throw");
    } catch (error) {
      expect(OpenRathError.isInstance(error, "invalid_argument")).toBe(true);
      expect((error as OpenRathError).details.field).toBe(field);
    }
  });
});
