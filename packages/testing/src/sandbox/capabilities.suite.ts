import { spawn } from "node:child_process";
import { OpenRathError } from "@openrath/core";
import { expect } from "vitest";
import { CODE_SNIPPETS } from "./internal/code-snippets.js";
import { defineGroup } from "./internal/define-group.js";
import { expectSandboxError } from "./internal/expect-sandbox-error.js";
import { probeLoopback, probeUnixSocket } from "./internal/network-probe.js";
import { findMarked, hostProcesses, processMarker } from "./internal/process-table.js";
import type { SandboxSuiteContext } from "./suite-context.js";

const ISOLATIONS = ["process", "namespace", "container", "microvm", "remote"];
const NETWORKS = ["none", "restricted", "open"];

/**
 * Capabilities: the manifest tells the truth. `network: "none"` means a listener the test opens on
 * 127.0.0.1 is unreachable from inside; `"open"` on a backend that shares the host's network
 * namespace means it is reachable; `stdin`, `streaming` and `languages` match behaviour.
 */
export function capabilitiesSuite(context: SandboxSuiteContext): void {
  const capabilities = context.capabilities;
  defineGroup(context, "capabilities", (group) => {
    group.test("the manifest is well-formed", async () => {
      expect(typeof capabilities.streaming).toBe("boolean");
      expect(typeof capabilities.stdin).toBe("boolean");
      expect(typeof capabilities.snapshots).toBe("boolean");
      expect(NETWORKS).toContain(capabilities.network);
      expect(ISOLATIONS).toContain(capabilities.isolation);
      expect(Array.isArray(capabilities.languages)).toBe(true);
      for (const language of capabilities.languages) {
        expect(typeof language).toBe("string");
        expect(language).toMatch(/^[a-z0-9][a-z0-9+#._-]*$/);
      }
      expect(new Set(capabilities.languages).size, "languages lists a language twice").toBe(
        capabilities.languages.length,
      );
    });

    const sharesHostNetwork = capabilities.isolation === "process" || capabilities.isolation === "namespace";
    const networkTitle = "the network claim tells the truth";
    if (capabilities.network === "none") {
      group.test(networkTitle, async () => {
        const sandbox = await group.open();
        const probe = await probeLoopback(sandbox, capabilities.languages);
        expect(
          probe.reached,
          `network is "none" but the sandbox reached a listener on the host's 127.0.0.1 (probe: ${probe.tool})\n${probe.transcript}`,
        ).toBe(false);
      });

      group.test("no Unix socket planted on the host is reachable (network none)", async () => {
        const sandbox = await group.open();
        const probe = await probeUnixSocket(sandbox, capabilities.languages);
        expect(
          probe.reached,
          `network is "none" but the sandbox reached a Unix socket in the host's temporary directory (probe: ${probe.tool})\n${probe.transcript}`,
        ).toBe(false);
      });
    } else if (capabilities.network === "open" && sharesHostNetwork) {
      group.test(networkTitle, async () => {
        const sandbox = await group.open();
        const probe = await probeLoopback(sandbox, capabilities.languages);
        expect(probe.tool, "the sandbox has no tool or language to open a TCP connection with").not.toBe(
          "none",
        );
        expect(
          probe.reached,
          `network is "open" with ${capabilities.isolation} isolation, but the sandbox could not reach a listener on 127.0.0.1 (probe: ${probe.tool})\n${probe.transcript}`,
        ).toBe(true);
      });
    } else {
      const reason =
        capabilities.network === "open"
          ? `${capabilities.isolation} isolation has its own loopback, and the suite contacts nothing outside 127.0.0.0/8`
          : "a restricted allow-list is backend-specific";
      group.skip(networkTitle, reason);
    }

    group.test(
      "the isolation claim tells the truth: only process isolation shows this machine's processes",
      async () => {
        const marker = processMarker("host");
        const host = spawn("sh", ["-c", "sleep 30", marker], { stdio: "ignore" });
        try {
          await new Promise((resolve) => setTimeout(resolve, 100));
          expect(hostProcesses(marker).length, "the marked host process did not start").toBeGreaterThan(0);
          const sandbox = await group.open();
          const inside = (await findMarked(sandbox, marker)).filter((line) =>
            line.startsWith("in the sandbox"),
          );
          if (capabilities.isolation === "process") {
            expect(
              inside.length,
              "isolation is process, but the host's processes are not visible",
            ).toBeGreaterThan(0);
          } else {
            expect(
              inside,
              `isolation is ${capabilities.isolation}, but a host process is visible inside`,
            ).toEqual([]);
          }
        } finally {
          host.kill("SIGKILL");
        }
      },
    );

    group.test(
      "the snapshots claim tells the truth: v1 has no snapshot API, so none is claimed",
      async () => {
        expect(capabilities.snapshots).toBe(false);
        expect([undefined, "contained", "best-effort"]).toContain(capabilities.processTree);
      },
    );

    group.test("the stdin claim tells the truth", async () => {
      const sandbox = await group.open();
      if (capabilities.stdin) {
        const result = await sandbox.exec(["cat"], { stdin: "piped\n" });
        expect(result.stdout).toBe("piped\n");
      } else {
        await expectSandboxError(
          () => sandbox.exec(["cat"], { stdin: "piped\n" }),
          "unsupported",
          "stdin is false, so exec with stdin",
        );
      }
    });

    group.test("the streaming claim tells the truth", async () => {
      const sandbox = await group.open();
      const arrivals: number[] = [];
      const chunks: string[] = [];
      const result = await sandbox.exec("echo first; sleep 1; echo second", {
        onStdout: (text) => {
          arrivals.push(Date.now());
          chunks.push(text);
        },
      });
      const settledAt = Date.now();
      expect(result.stdout).toBe("first\nsecond\n");
      if (capabilities.streaming) {
        expect(arrivals.length, "streaming is claimed but onStdout was never called").toBeGreaterThan(0);
        expect(
          settledAt - arrivals[0]!,
          "streaming is claimed but the first line came with the end",
        ).toBeGreaterThanOrEqual(500);
      }
      if (chunks.length > 0) expect(chunks.join("")).toBe(result.stdout);
    });

    group.test("the languages claim tells the truth", async () => {
      const sandbox = await group.open();
      for (const language of capabilities.languages) {
        const snippets = CODE_SNIPPETS[language];
        if (snippets) {
          const result = await sandbox.runCode(snippets.print, language);
          expect(result, `languages lists ${language} but ${snippets.print} did not print 2`).toMatchObject({
            exitCode: 0,
            stdout: "2\n",
          });
        } else {
          const refused = await sandbox.runCode("", language).then(
            () => false,
            (error: unknown) => OpenRathError.isInstance(error, "unsupported_language"),
          );
          expect(refused, `languages lists ${language} but runCode refuses it`).toBe(false);
        }
      }
      await expectSandboxError(
        () => sandbox.runCode("1", "cobol"),
        "unsupported_language",
        'runCode("1", "cobol")',
      );
    });
  });
}
