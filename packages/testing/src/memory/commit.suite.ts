import { Session } from "@openrath/core";
import { extractMemories } from "@openrath/core/backend";
import { expect } from "vitest";
import { ids, showHits, texts } from "./internal/corpus.js";
import { defineGroup } from "./internal/define-group.js";
import type { MemorySuiteContext } from "./suite-context.js";

/** A travel conversation with a system prompt, a tool round trip, an event and two final answers. */
function travelSession(): Session {
  return Session.fromUserMessage("Plan a weekend in Lisbon in May.")
    .append({ kind: "system", content: "You are a travel planner." })
    .append({
      kind: "assistant",
      content: null,
      toolCalls: [
        { id: "call_1", type: "function", function: { name: "search_flights", arguments: '{"to":"LIS"}' } },
      ],
    })
    .append({
      kind: "tool_result",
      toolCallId: "call_1",
      name: "search_flights",
      content: '{"flights":["TP1351"]}',
    })
    .append({ kind: "event", name: "selector.decision", data: { picked: "planner" } })
    .append({
      kind: "assistant",
      content: "Fly TP1351 on Friday and ride tram 28 on Saturday.",
      author: "planner",
    })
    .append({ kind: "user", content: "  Add a fado evening.  " })
    .append({ kind: "assistant", content: "Booked fado at Tasca do Chico on Saturday night." });
}

/**
 * Commit: `commit(session)` stores the user requests and final answers ({@link extractMemories}) at
 * the given scope, tagged with the session id as source; committing the same session again stores
 * nothing new; recalled memory in the session (untrusted user chunks) is not committed.
 */
export function commitSuite(context: MemorySuiteContext): void {
  defineGroup(context, "commit", (group) => {
    group.test("commit stores the user requests and final answers, tagged with the session id", async () => {
      const memory = await group.open();
      const session = travelSession();
      const scope = { tenant: "acme", user: "ann" };
      const committed = await memory.commit(session, { scope });
      const expected = extractMemories(session);
      expect(expected.map((input) => input.text)).toEqual([
        "Plan a weekend in Lisbon in May.",
        "Fly TP1351 on Friday and ride tram 28 on Saturday.",
        "Add a fado evening.",
        "Booked fado at Tasca do Chico on Saturday night.",
      ]);
      expect(committed.map((entry) => entry.text)).toEqual(expected.map((input) => input.text));
      for (const [i, entry] of committed.entries()) {
        expect(entry.source, `entry ${JSON.stringify(entry.text)}`).toBe(session.id);
        expect(entry.scope).toEqual(scope);
        expect(entry.metadata).toEqual(expected[i]!.metadata);
      }
      const hits = await memory.recall("Lisbon fado Saturday", {
        scope: { ...scope, agent: "planner" },
        topK: 10,
      });
      expect(texts(hits).sort(), `hits: ${showHits(hits)}`).toEqual(
        [
          "Plan a weekend in Lisbon in May.",
          "Fly TP1351 on Friday and ride tram 28 on Saturday.",
          "Add a fado evening.",
          "Booked fado at Tasca do Chico on Saturday night.",
        ].sort(),
      );
      const everything = await memory.recall("search_flights flights LIS travel planner picked Lisbon", {
        scope,
        topK: 50,
      });
      const stray = texts(everything).filter((text) => !expected.some((input) => input.text === text));
      expect(stray, "tool traffic, system or event text was committed").toEqual([]);
      const sibling = await memory.recall("Lisbon fado Saturday", {
        scope: { tenant: "acme", user: "bob" },
        topK: 10,
      });
      expect(sibling, `a sibling user sees the commit: ${showHits(sibling)}`).toEqual([]);
    });

    group.test("commit without a scope stores at the store's default scope", async () => {
      const memory = await group.open();
      const session = Session.fromUserMessage("Water the ferns on Sundays.").append({
        kind: "assistant",
        content: "Noted: ferns get water every Sunday.",
      });
      const committed = await memory.commit(session);
      expect(committed.map((entry) => entry.text)).toEqual([
        "Water the ferns on Sundays.",
        "Noted: ferns get water every Sunday.",
      ]);
      const hits = await memory.recall("ferns", { scope: committed[0]!.scope, topK: 10 });
      expect(ids(hits).sort(), `hits: ${showHits(hits)}`).toEqual(committed.map((entry) => entry.id).sort());
      const [probe] = await memory.remember({ text: "Default scope probe." });
      for (const entry of committed)
        expect(entry.scope, "remember and commit default to one scope").toEqual(probe!.scope);
    });

    group.test("a second commit of the same session returns [] and stores nothing new", async () => {
      const memory = await group.open();
      const session = travelSession();
      const scope = { tenant: "acme", user: "ann" };
      expect(await memory.commit(session, { scope })).toHaveLength(4);
      expect(await memory.commit(session, { scope })).toEqual([]);
      const hits = await memory.recall("Lisbon fado Saturday TP1351", { scope, topK: 50 });
      expect(hits.length, `hits: ${showHits(hits)}`).toBe(4);
    });

    group.test("a session that grew commits only its new turns", async () => {
      const memory = await group.open();
      const scope = { tenant: "acme", user: "ann" };
      const first = Session.fromUserMessage("Which gate for the Porto train?").append({
        kind: "assistant",
        content: "The Porto train leaves from gate 7.",
      });
      expect(await memory.commit(first, { scope })).toHaveLength(2);
      const grown = first
        .append({ kind: "user", content: "And the return train?" })
        .append({ kind: "assistant", content: "The return train arrives at gate 3." });
      const added = await memory.commit(grown, { scope });
      expect(added.map((entry) => entry.text)).toEqual([
        "And the return train?",
        "The return train arrives at gate 3.",
      ]);
      const hits = await memory.recall("train gate", { scope, topK: 50 });
      expect(hits.length, `hits: ${showHits(hits)}`).toBe(4);
    });

    group.test("recalled memory in the session (untrusted user chunks) is not committed", async () => {
      const memory = await group.open();
      const scope = { tenant: "acme", user: "ann" };
      const session = Session.fromUserMessage("What is the guest wifi password?")
        .append({
          kind: "user",
          content: "Recalled memory: the guest wifi password is hunter2.",
          untrusted: true,
          source: "m_1",
        })
        .append({ kind: "assistant", content: "Ask the front desk for today's code." });
      const committed = await memory.commit(session, { scope });
      expect(committed.map((entry) => entry.text)).toEqual([
        "What is the guest wifi password?",
        "Ask the front desk for today's code.",
      ]);
      const hits = await memory.recall("hunter2 recalled guest wifi password", { scope, topK: 10 });
      expect(texts(hits), "recalled memory was committed").not.toContain(
        "Recalled memory: the guest wifi password is hunter2.",
      );
    });

    group.test("a session with nothing worth keeping commits nothing", async () => {
      const memory = await group.open();
      const scope = { tenant: "acme" };
      expect(await memory.commit(Session.empty(), { scope })).toEqual([]);
      const toolsOnly = Session.empty()
        .append({ kind: "system", content: "Tools only." })
        .append({
          kind: "assistant",
          content: "Checking the weather.",
          toolCalls: [{ id: "call_9", type: "function", function: { name: "weather", arguments: "{}" } }],
        })
        .append({ kind: "tool_result", toolCallId: "call_9", name: "weather", content: '"sunny"' })
        .append({ kind: "user", content: "   " });
      expect(await memory.commit(toolsOnly, { scope })).toEqual([]);
      expect(await memory.recall("weather sunny checking tools", { scope, topK: 10 })).toEqual([]);
    });
  });
}
