/**
 * An agent that asks a human before it sends an email — durably. Start it, kill it while it waits
 * (Ctrl-C, `kill -9`), start it again, approve from the command line, watch it finish: the email is
 * sent exactly once.
 *
 *   pnpm --filter @openrath/examples run approval                 # run: waits for approval
 *   approve | reject <reason> | list                              # typed into the running worker
 *   pnpm --filter @openrath/examples run approval -- approve [id] # with the worker stopped
 *   pnpm --filter @openrath/examples run approval -- list
 *
 * Options: `--dir <dir>` (default `.openrath/approval`), `--postgres <url>` (a server instead of
 * the embedded PGlite database; then `approve` works from any terminal while the worker runs),
 * `--fresh` (start over), `--actor <name>`.
 */
import { readFile, rm } from "node:fs/promises";
import { resolve } from "node:path";
import { createInterface } from "node:readline";
import { parseArgs } from "node:util";
import { Session } from "@openrath/core";
import { ACTIVE_STATUSES, type DurableRuntime, type InterruptRecord } from "@openrath/runtime-durable";
import { type ExampleTarget, openExample, outboxOf } from "./approval-store.js";
import { TASK } from "./approval-workflow.js";

const WORKFLOW = "send-with-approval";
const print = (line: string) => process.stdout.write(`${line}\n`);

function describeInterrupt(interrupt: InterruptRecord): string[] {
  const request = interrupt.request as { tool?: string; arguments?: { to?: string; subject?: string } };
  return [
    `⏸ waiting for approval: ${interrupt.id}`,
    `   ${request.tool}(${JSON.stringify(request.arguments)})`,
    "   type `approve`, `reject <reason>` or `list` here — or stop this worker and run the `approve` command",
  ];
}

/** What an interrupt id looks like (anything else after the verb is the reason). */
const INTERRUPT_ID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/**
 * Applies `approve [id] [reason…]` or `reject [id] <reason…>`; returns what to print.
 *
 * @throws when the id given names no interrupt that waits (a typo must not decide another one).
 */
async function decide(runtime: DurableRuntime, words: readonly string[], actor: string): Promise<string> {
  const [verb, ...rest] = words;
  const pending = (await runtime.interrupts.list()).items;
  if (rest[0] && INTERRUPT_ID.test(rest[0]) && !pending.some((i) => i.id === rest[0]))
    throw new Error(`No interrupt ${rest[0]} is waiting for a decision; \`list\` shows the ones that are.`);
  const named = rest[0] && pending.some((i) => i.id === rest[0]) ? rest.shift() : undefined;
  const id = named ?? (pending.length === 1 ? pending[0]!.id : undefined);
  if (!id)
    return pending.length === 0
      ? "Nothing is waiting for a decision."
      : "Several interrupts wait: name one by id.";
  const reason = rest.join(" ") || undefined;
  const decision =
    verb === "approve" ? { kind: "approve" as const, actor } : { kind: "reject" as const, actor };
  const { interrupt } = await runtime.interrupts.decide(id, reason ? { ...decision, reason } : decision);
  return `✔ ${interrupt.decision?.kind} by ${interrupt.decision?.actor}: ${interrupt.id}`;
}

async function list(runtime: DurableRuntime): Promise<string[]> {
  const pending = (await runtime.interrupts.list()).items;
  return pending.length === 0 ? ["Nothing is waiting for a decision."] : pending.flatMap(describeInterrupt);
}

/** The worker: runs (or resumes) the example's run, takes decisions typed on stdin, ends with the run. */
async function work(target: ExampleTarget, actor: string): Promise<void> {
  const { runtime, store, release } = await openExample(target);
  const active = (await store.listRuns({ tenantId: "default", status: ACTIVE_STATUSES })).find(
    (r) => r.workflow === WORKFLOW,
  );
  const run = active ?? (await runtime.submit(WORKFLOW, Session.fromUserMessage(TASK)));
  print(active ? `Resuming run ${run.id} (${run.status}).` : `Started run ${run.id}: ${TASK}`);
  const worker = runtime.worker({ workerId: "approval-example", concurrency: 1, leaseMs: 5000 });
  await worker.start();
  // SIGTERM or Ctrl-C: the step in flight finishes and commits, the run goes back to the queue.
  const detach = runtime.closeOnSignals();
  const input = createInterface({ input: process.stdin, terminal: false });
  input.on("line", (line) => {
    const words = line.trim().split(/\s+/).filter(Boolean);
    if (words.length === 0) return;
    const action =
      words[0] === "approve" || words[0] === "reject"
        ? decide(runtime, words, actor).then(print)
        : words[0] === "list"
          ? list(runtime).then((lines) => lines.forEach(print))
          : Promise.resolve(
              print(`Unknown command "${words[0]}": approve [id] [reason], reject [id] <reason>, list.`),
            );
    action.catch((error: Error) => print(`✘ ${error.message}`));
  });
  try {
    if (run.status === "waiting") for (const line of await list(runtime)) print(line);
    for await (const event of runtime.follow(run.id, { after: run.eventSeq })) {
      const data = event.data as { interruptId?: string; decision?: string; actor?: string; to?: string };
      if (event.type === "run.interrupt.created") {
        const interrupt = await runtime.interrupts.get(data.interruptId!);
        if (interrupt) for (const line of describeInterrupt(interrupt)) print(line);
      } else if (event.type === "run.interrupt.decided")
        print(`▶ resumed after ${data.decision} by ${data.actor}`);
      else if (event.type === "run.state.changed" && data.to) print(`■ ${data.to}`);
    }
    const ended = await runtime.wait(run.id);
    const session = await runtime.session(run.id);
    const sent = (await readFile(outboxOf(target.dir), "utf8").catch(() => "")).split("\n").filter(Boolean);
    print(`finished (${ended.status}): ${session.text() ?? "(no answer)"}`);
    print(`outbox: ${sent.length} email(s) sent`);
  } finally {
    detach();
    input.close();
    // The run is over: stop reading the terminal, so the process ends with it.
    process.stdin.destroy();
    await worker.stop({ drain: false });
    await release();
  }
}

async function main() {
  const { values, positionals } = parseArgs({
    allowPositionals: true,
    options: {
      dir: { type: "string" },
      postgres: { type: "string" },
      fresh: { type: "boolean" },
      actor: { type: "string" },
    },
  });
  const target: ExampleTarget = {
    dir: resolve(values.dir ?? ".openrath/approval"),
    ...(values.postgres ? { postgres: values.postgres } : {}),
  };
  if (values.fresh) await rm(target.dir, { recursive: true, force: true });
  const actor = values.actor ?? process.env.USER ?? "operator";
  const [command = "run", ...rest] = positionals;
  if (command === "run") return work(target, actor);
  if (command !== "approve" && command !== "reject" && command !== "list") {
    throw new Error(`Unknown command "${command}": run, approve [id] [reason], reject [id] <reason>, list.`);
  }
  const { runtime, release } = await openExample(target);
  try {
    if (command === "list") for (const line of await list(runtime)) print(line);
    else print(await decide(runtime, [command, ...rest], actor));
  } finally {
    await release();
  }
}

main().catch((error: Error) => {
  process.stderr.write(`${error.message}\n`);
  process.exitCode = 1;
});
