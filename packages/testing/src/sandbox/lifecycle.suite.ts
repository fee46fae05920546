import { createRegistry, type SandboxBackendV1, type SandboxV1, Session } from "@openrath/core";
import { expect } from "vitest";
import { defineGroup } from "./internal/define-group.js";
import { expectSandboxError } from "./internal/expect-sandbox-error.js";
import { sleep } from "./internal/sleep.js";
import type { SandboxSuiteContext } from "./suite-context.js";

/**
 * Lifecycle: a fresh sandbox has an id and an absolute workspace, `close` is idempotent, every
 * method refuses a closed sandbox, and a session placed on the backend opens it lazily, once, shares
 * it with forks and closes it when the last holder lets go.
 */
export function lifecycleSuite(context: SandboxSuiteContext): void {
  defineGroup(context, "lifecycle", (group) => {
    /** A session placed on a one-off registry whose only backend opens through `create`, counting opens. */
    function placedSession() {
      const counter = { opens: 0 };
      const backend: SandboxBackendV1 = {
        kind: "sandbox",
        key: "conformance",
        specVersion: "v1",
        capabilities: context.capabilities,
        open: async () => {
          counter.opens++;
          return group.track(await context.create());
        },
      };
      const registry = createRegistry({ sandboxes: [backend] });
      const session = Session.fromUserMessage("x").to("conformance" as never, undefined as never, {
        registry,
      });
      return { session, counter };
    }

    group.test("create gives an open sandbox with an id and an absolute workspace", async () => {
      const sandbox = await group.open();
      expect(typeof sandbox.id).toBe("string");
      expect(sandbox.id.length).toBeGreaterThan(0);
      expect(typeof sandbox.workspace).toBe("string");
      expect(
        sandbox.workspace.startsWith("/"),
        `workspace ${JSON.stringify(sandbox.workspace)} is not absolute`,
      ).toBe(true);
      const result = await sandbox.exec("echo ready");
      expect(result.exitCode).toBe(0);
      expect(result.stdout).toBe("ready\n");
    });

    group.test("close is idempotent", async () => {
      const sandbox = await group.open();
      await sandbox.close();
      await sandbox.close();
      await Promise.all([sandbox.close(), sandbox.close()]);
    });

    group.test("close called concurrently on an open sandbox resolves every call", async () => {
      const sandbox = await group.open();
      await Promise.all([sandbox.close(), sandbox.close(), sandbox.close()]);
    });

    group.test("every method rejects with sandbox_closed after close", async () => {
      const sandbox = await group.open();
      await sandbox.writeFile("kept.txt", "kept");
      await sandbox.close();
      const calls: [string, () => Promise<unknown>][] = [
        ['exec("echo hi")', () => sandbox.exec("echo hi")],
        ['exec(["echo", "hi"])', () => sandbox.exec(["echo", "hi"])],
        ['readFile("kept.txt")', () => sandbox.readFile("kept.txt")],
        [
          'readFile("kept.txt", { encoding: "bytes" })',
          () => sandbox.readFile("kept.txt", { encoding: "bytes" }),
        ],
        ['writeFile("new.txt", "x")', () => sandbox.writeFile("new.txt", "x")],
        ["listFiles()", () => sandbox.listFiles()],
        ['listFiles(".", { recursive: true })', () => sandbox.listFiles(".", { recursive: true })],
        ['exists("kept.txt")', () => sandbox.exists("kept.txt")],
      ];
      const language = context.capabilities.languages[0];
      if (language !== undefined) {
        calls.push([`runCode("", ${JSON.stringify(language)})`, () => sandbox.runCode("", language)]);
      }
      for (const [what, call] of calls)
        await expectSandboxError(call, "sandbox_closed", `after close, ${what}`);
    });

    group.test("close ends a running command", async () => {
      const sandbox = await group.open();
      const started = Date.now();
      // Settled either way: the contract says close releases the processes, not how their exec ends.
      const running = sandbox.exec("sleep 30").then(
        () => "resolved",
        () => "rejected",
      );
      await sleep(300);
      await sandbox.close();
      const closedAfter = Date.now() - started;
      expect(closedAfter, `close() took ${closedAfter} ms with a sleep 30 running`).toBeLessThan(10_000);
      await Promise.race([running, sleep(10_000 - closedAfter)]);
      const settled = await Promise.race([running, Promise.resolve("pending")]);
      expect(settled, "exec of a command still running at close() never settled").not.toBe("pending");
    });

    group.test("a placed session opens nothing until sandbox() is called", async () => {
      const { session, counter } = placedSession();
      const fork = session.fork();
      expect(counter.opens).toBe(0);
      const sandbox = await session.sandbox();
      expect(counter.opens).toBe(1);
      expect((await sandbox.exec("echo placed")).stdout).toBe("placed\n");
      await fork.release();
      await session.release();
    });

    group.test("a fork's sandbox() returns the same sandbox, opened once", async () => {
      const { session, counter } = placedSession();
      const parent = await session.sandbox();
      const fork = session.fork();
      const shared = await fork.sandbox();
      expect(shared).toBe(parent);
      expect(shared.id).toBe(parent.id);
      expect(counter.opens).toBe(1);
      await fork.release();
      await session.release();
    });

    group.test("parallel first sandbox() calls open one sandbox", async () => {
      const { session, counter } = placedSession();
      const forks = [session.fork(), session.fork(), session.fork()];
      const sandboxes = await Promise.all([
        session.sandbox(),
        ...forks.map((f) => f.sandbox()),
        session.sandbox(),
      ]);
      expect(counter.opens).toBe(1);
      for (const sandbox of sandboxes) expect(sandbox.id).toBe(sandboxes[0]!.id);
      await Promise.all([session.release(), ...forks.map((f) => f.release())]);
    });

    group.test("releasing the parent keeps the sandbox open for the fork", async () => {
      const { session, counter } = placedSession();
      const sandbox = await session.sandbox();
      const fork = session.fork();
      await session.release();
      const shared = await fork.sandbox();
      expect(shared.id).toBe(sandbox.id);
      const result = await shared.exec("echo still-open");
      expect(result.stdout).toBe("still-open\n");
      expect(counter.opens).toBe(1);
      await fork.release();
    });

    group.test("releasing the last holder closes the sandbox", async () => {
      const { session, counter } = placedSession();
      const sandbox: SandboxV1 = await session.sandbox();
      const fork = session.fork();
      await session.release();
      await fork.release();
      await expectSandboxError(() => sandbox.exec("echo hi"), "sandbox_closed", "exec on a released sandbox");
      await expectSandboxError(() => fork.sandbox(), "sandbox_closed", "fork.sandbox() after release");
      expect(counter.opens).toBe(1);
    });
  });
}
