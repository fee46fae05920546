import { describe, expect, it } from "vitest";
import { isInternalAddress, webhookTargetRefusal } from "./webhook-target.js";

describe("webhook targets", () => {
  it("knows the internal ranges, IPv4 inside IPv6 included", () => {
    for (const address of [
      "127.0.0.1",
      "10.1.2.3",
      "172.20.0.1",
      "192.168.1.1",
      "169.254.169.254",
      "100.64.0.1",
      "0.0.0.0",
      "::1",
      "::",
      "fd00::1",
      "fe80::1",
      "::ffff:10.0.0.1",
      "[::1]",
    ])
      expect(isInternalAddress(address), address).toBe(true);
    for (const address of ["8.8.8.8", "93.184.216.34", "2606:4700::1111", "::ffff:8.8.4.4", "not-an-ip"])
      expect(isInternalAddress(address), address).toBe(false);
  });

  it("refuses internal literals and localhost unless allowed, and passes public literals without a lookup", async () => {
    expect(await webhookTargetRefusal("http://169.254.169.254/latest/meta-data", false)).toBe(
      "169.254.169.254 is an internal address",
    );
    expect(await webhookTargetRefusal("http://[::1]:8080/", false)).toBe("::1 is an internal address");
    expect(await webhookTargetRefusal("https://localhost/hooks", false)).toBe("localhost is this machine");
    expect(await webhookTargetRefusal("https://api.localhost/hooks", false)).toBe(
      "api.localhost is this machine",
    );
    expect(await webhookTargetRefusal("https://93.184.216.34/hooks", false)).toBeUndefined();
    expect(await webhookTargetRefusal("http://127.0.0.1:9/hooks", true)).toBeUndefined();
  });
});
