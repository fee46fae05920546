import { OpenRathError } from "@openrath/core";
import { describe, expect, it } from "vitest";
import { type S3ArtifactStoreOptions, s3ArtifactStore } from "./s3-artifact-store.js";

function refusal(options: unknown): OpenRathError {
  try {
    s3ArtifactStore(options as S3ArtifactStoreOptions);
  } catch (error) {
    expect(OpenRathError.isInstance(error, "invalid_argument"), String(error)).toBe(true);
    return error as OpenRathError;
  }
  throw new Error("expected invalid_argument");
}

describe("s3ArtifactStore options, checked before any client is made", () => {
  it("needs a bucket", () => {
    expect(refusal({}).message).toBe(
      'Invalid options of s3ArtifactStore(): "bucket" is missing; it needs a bucket name.',
    );
    expect(refusal(undefined).message).toMatch(
      /the options are missing; s3ArtifactStore takes an object such as/,
    );
  });

  it("names every bad option with its value and what is valid", () => {
    const error = refusal({ bucket: "b", prefix: "a/../b", queueSize: 0, maxBytes: 6 * 1024 ** 3 });
    expect(error.message.split("\n")).toEqual([
      "Invalid options of s3ArtifactStore(), 3 problems:",
      '  - "prefix" is "a/../b"; each "/"-separated segment must be non-empty, use only A-Z, a-z, 0-9, "_", "." and "-", and not be "." or "..".',
      '  - "queueSize" is 0; it must be a positive integer.',
      '  - "maxBytes" is 6442450944; it must be at most 5 GiB (5368709120), the largest object one server-side copy handles.',
    ]);
  });

  it("refuses an unknown option, and never shows credentials", () => {
    const error = refusal({
      bucket: "b",
      bukcet: "c",
      credentials: "AKIA-and-a-secret",
      clientConfig: "secret-bearing settings",
    });
    expect(error.message).toContain(
      '"bukcet" is "c"; it is not an option of s3ArtifactStore(); the fields are bucket, prefix,',
    );
    expect(`${error.message}${JSON.stringify(error.details)}`).not.toMatch(/AKIA|secret-bearing/);
  });

  it("takes the bucket root as a prefix", () => {
    expect(s3ArtifactStore({ bucket: "b", prefix: "", region: "us-east-1" }).capabilities.multipart).toBe(
      true,
    );
  });
});
