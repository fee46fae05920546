import {
  BackendClashError,
  MergeConflictError,
  OpenRathError,
  SessionLogError,
  UnknownBackendError,
} from "@openrath/core";
import { describe, expect, it } from "vitest";

describe("OpenRathError", () => {
  it("carries the code, the message and the details it was given", () => {
    const error = new OpenRathError("invalid_argument", "bad input", { details: { field: "x" } });
    expect(error).toBeInstanceOf(Error);
    expect(error.code).toBe("invalid_argument");
    expect(error.message).toBe("bad input");
    expect(error.details).toEqual({ field: "x" });
  });

  it("defaults details to an empty object and leaves cause unset when none is given", () => {
    const error = new OpenRathError("invalid_argument", "bad input");
    expect(error.details).toEqual({});
    expect("cause" in error).toBe(false);
  });

  it("keeps the cause it wraps", () => {
    const cause = new SyntaxError("Unexpected token");
    const error = new OpenRathError("invalid_session_json", "does not parse", { cause });
    expect(error.cause).toBe(cause);
  });

  it("names each error after its class, subclasses included", () => {
    expect(new OpenRathError("x", "m").name).toBe("OpenRathError");
    expect(new UnknownBackendError("unknown_backend", "m").name).toBe("UnknownBackendError");
    expect(new BackendClashError("backend_clash", "m").name).toBe("BackendClashError");
    expect(new MergeConflictError("merge_conflict", "m").name).toBe("MergeConflictError");
    expect(new SessionLogError("log_corrupt", "m").name).toBe("SessionLogError");
    expect(String(new MergeConflictError("merge_conflict", "boom"))).toBe("MergeConflictError: boom");
  });

  it("makes subclasses instances of OpenRathError and of Error", () => {
    const error = new MergeConflictError("merge_conflict", "m");
    expect(error).toBeInstanceOf(MergeConflictError);
    expect(error).toBeInstanceOf(OpenRathError);
    expect(error).toBeInstanceOf(Error);
  });
});

describe("OpenRathError.isInstance", () => {
  it("recognizes the base class and every subclass without a code", () => {
    expect(OpenRathError.isInstance(new OpenRathError("a", "m"))).toBe(true);
    expect(OpenRathError.isInstance(new UnknownBackendError("unknown_backend", "m"))).toBe(true);
    expect(OpenRathError.isInstance(new BackendClashError("backend_clash", "m"))).toBe(true);
    expect(OpenRathError.isInstance(new MergeConflictError("merge_conflict", "m"))).toBe(true);
    expect(OpenRathError.isInstance(new SessionLogError("log_closed", "m"))).toBe(true);
  });

  it("matches the code when one is given", () => {
    const error = new MergeConflictError("merge_conflict", "m");
    expect(OpenRathError.isInstance(error, "merge_conflict")).toBe(true);
    expect(OpenRathError.isInstance(error, "backend_clash")).toBe(false);
  });

  it("recognizes an error from another copy of core by its Symbol.for marker", () => {
    // A second installed copy of core has its own class, so instanceof fails; the marker is shared.
    const foreign = Object.assign(new Error("from the other copy"), {
      [Symbol.for("openrath.error")]: true,
      code: "unknown_backend",
    });
    expect(foreign instanceof OpenRathError).toBe(false);
    expect(OpenRathError.isInstance(foreign)).toBe(true);
    expect(OpenRathError.isInstance(foreign, "unknown_backend")).toBe(true);
    expect(OpenRathError.isInstance(foreign, "merge_conflict")).toBe(false);
    const plainObject = { [Symbol.for("openrath.error")]: true, code: "x" };
    expect(OpenRathError.isInstance(plainObject, "x")).toBe(true);
  });

  it("rejects plain errors, look-alikes without the marker, and non-objects", () => {
    expect(OpenRathError.isInstance(new Error("plain"))).toBe(false);
    expect(OpenRathError.isInstance(Object.assign(new Error("m"), { code: "merge_conflict" }))).toBe(false);
    expect(OpenRathError.isInstance({ [Symbol.for("openrath.error")]: "yes" })).toBe(false);
    expect(OpenRathError.isInstance({ [Symbol("openrath.error")]: true })).toBe(false);
    expect(OpenRathError.isInstance(null)).toBe(false);
    expect(OpenRathError.isInstance(undefined)).toBe(false);
    expect(OpenRathError.isInstance("merge_conflict")).toBe(false);
  });
});
