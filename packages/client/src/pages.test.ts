import { describe, expect, it } from "vitest";
import { createClient } from "./create-client.js";
import { serverPerFile } from "./testing/server.js";

const server = serverPerFile();

/** Everything an async iterable yields. */
async function all<T>(items: AsyncIterable<T>): Promise<T[]> {
  const out: T[] = [];
  for await (const item of items) out.push(item);
  return out;
}

describe("listAll walks every page", () => {
  it("of runs, events, interrupts and effects: each item once, as one big page has them", async () => {
    const client = createClient({ baseUrl: server().baseUrl });
    const runs = [];
    for (let i = 0; i < 5; i++)
      runs.push(await client.runs.create({ assistant: "approval", input: `r${i}` }));
    await Promise.all(runs.map((run) => client.runs.wait(run.id, { parked: true })));

    const everyRun = (await client.runs.list({ limit: 200 })).items.map((run) => run.id);
    expect(everyRun).toEqual(expect.arrayContaining(runs.map((run) => run.id)));
    expect((await all(client.runs.listAll({ limit: 2 }))).map((run) => run.id)).toEqual(everyRun);

    const [first] = runs;
    const events = (await client.events.list(first?.id ?? "", { limit: 1000 })).items;
    expect(events.length).toBeGreaterThan(2);
    expect(await all(client.events.listAll(first?.id ?? "", { limit: 1 }))).toEqual(events);
    expect(await all(client.events.listAll(first?.id ?? "", { after: 1, limit: 1 }))).toEqual(
      events.slice(1),
    );

    const inbox = (await client.interrupts.list({ limit: 200 })).items.map((interrupt) => interrupt.id);
    expect(inbox).toHaveLength(5);
    expect((await all(client.interrupts.listAll({ limit: 2 }))).map((interrupt) => interrupt.id)).toEqual(
      inbox,
    );

    expect(await all(client.effects.listAll({ limit: 1 }))).toEqual([]);
  });

  it("of the audit log", async (context) => {
    if (!server().runtime.store.capabilities.access) context.skip("the store keeps no audit log");
    const client = createClient({ baseUrl: server().baseUrl });
    for (let i = 0; i < 3; i++) await client.runs.create({ assistant: "echo", input: `a${i}` });
    const audit = (await client.audit.list({ limit: 500 })).items.map((entry) => entry.id);
    expect(audit.length).toBeGreaterThanOrEqual(3);
    expect((await all(client.audit.listAll({ limit: 2 }))).map((entry) => entry.id)).toEqual(audit);
  });
});
