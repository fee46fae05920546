// The workflows the drills' `openrath serve` and `openrath worker` processes run (`--workflows`):
// the durable MAMS example, and a tool-heavy one whose `non_idempotent` tool appends every call it
// makes to a ledger file, so a drill can count effects that happened twice.
import { appendFileSync } from "node:fs";
import { setTimeout as sleep } from "node:timers/promises";
import {
  Agent,
  defaultRegistry,
  defineTool,
  ScriptedProvider,
  type ScriptedTurn,
  type Session,
} from "@openrath/core";
import { scriptedBrain } from "@openrath/demo";
import { DurableMamsWorkflow } from "@openrath/demo/durable";
import { defineWorkflow } from "@openrath/runtime-durable";
import { localSandbox } from "@openrath/sandbox-local";
import { BULK_BYTES, bulk } from "./bulk.js";

const ledger = process.env.DRILL_LEDGER ?? "";
const workspace = process.env.DRILL_WORKSPACE ?? "";
if (ledger === "" || workspace === "")
  throw new Error("DRILL_LEDGER and DRILL_WORKSPACE must be set (the drill harness sets them)");

/** How many charges one ledger run makes. */
export const CHARGES = 4;
/** How long a charge takes: long enough that many kills land inside one. */
const CHARGE_MS = 150;

const registry = defaultRegistry();
if (!registry.has("sandbox", "local")) registry.registerSandbox(localSandbox());

/** The durable MAMS example, with a short pause per step so faults land mid-run. */
export const mams = new DurableMamsWorkflow(scriptedBrain(), { workspace }, 100);

/** A read that is always safe to repeat. */
const balance = defineTool<{ ref: string }>({
  name: "balance",
  description: "Read the account balance",
  parameters: {
    type: "object",
    properties: { ref: { type: "string" } },
    required: ["ref"],
    additionalProperties: false,
  },
  effect: "read_only",
  async execute() {
    return { balance: 100 };
  },
});

/** A charge: non-idempotent, so one that a crash left unknown parks the run instead of repeating. */
const charge = defineTool<{ ref: string }>({
  name: "charge",
  description: "Charge the account once",
  parameters: {
    type: "object",
    properties: { ref: { type: "string" } },
    required: ["ref"],
    additionalProperties: false,
  },
  effect: "non_idempotent",
  idempotencyKey: true,
  async execute({ ref }, ctx) {
    await sleep(CHARGE_MS / 2, undefined, { signal: ctx.signal });
    appendFileSync(ledger, `${JSON.stringify({ ref, key: ctx.idempotencyKey ?? null, pid: process.pid })}\n`);
    await sleep(CHARGE_MS / 2);
    return { charged: ref };
  },
});

/** Asks for the balance and a charge, `CHARGES` times, then reports; the refs carry the run's input. */
function cashier(): ScriptedProvider {
  return new ScriptedProvider((request): ScriptedTurn => {
    const input = String(request.messages.find((m) => m.role === "user")?.content ?? "");
    const results = request.messages.filter((m) => m.role === "tool").length;
    const n = Math.floor(results / 2) + 1;
    if (n > CHARGES) return { text: `charged ${CHARGES} times for ${input}` };
    return {
      toolCalls: [
        { id: `balance-${n}`, name: "balance", arguments: { ref: `${input}#${n}` } },
        { id: `charge-${n}`, name: "charge", arguments: { ref: `${input}#${n}` } },
      ],
    };
  });
}

const agent = new Agent({
  name: "cashier",
  instructions: "You charge the account as asked.",
  provider: cashier(),
  tools: [balance, charge],
});

/**
 * Two steps of charges (a checkpoint between them), so a run's effects span checkpoints. Revision
 * `DRILL_REVISION` (default 1): revision 2 adds an audit step, so the two compile to different
 * plans, as a changed workflow in a new release does.
 */
export const ledgerWorkflow = ledgerRevision(process.env.DRILL_REVISION ?? "1");

function ledgerRevision(revision: string) {
  const charged = defineWorkflow("ledger", { version: revision }).step(
    "charge",
    (session, ctx) => agent.run(session, ctx),
    { entry: true, next: "confirm" },
  );
  if (revision === "1")
    return charged.step("confirm", async (session) =>
      session.append({ kind: "assistant", content: "confirmed" }),
    );
  return charged
    .step("confirm", async (session) => session.append({ kind: "assistant", content: "confirmed" }), {
      next: "audit",
    })
    .step("audit", async (session) =>
      session.append({ kind: "assistant", content: `audited by revision ${revision}` }),
    );
}

const bulkStep = (n: number) => async (session: Session) =>
  session.append({
    kind: "assistant",
    content: bulk(String((session.chunks[0] as { content?: unknown } | undefined)?.content ?? ""), n),
  });

/** Three steps, each committing a chunk of {@link BULK_BYTES}: uploads to cut. */
export const bulky = defineWorkflow("bulky")
  .step("one", bulkStep(1), { entry: true, next: "two", retry: { maxAttempts: 5 } })
  .step("two", bulkStep(2), { next: "three", retry: { maxAttempts: 5 } })
  .step("three", bulkStep(3), { retry: { maxAttempts: 5 } });
