import type { Message } from "@openrath/core";
import { requestFingerprint } from "@openrath/core/backend";
import { describe, expect, it } from "vitest";
import { messageHash, messagesDigest } from "./request-fingerprint.js";

const call = (id: string, name: string, args: string) => ({
  id,
  type: "function" as const,
  function: { name, arguments: args },
});

describe("message hashes", () => {
  it("tell apart messages that differ only where one field ends and the next begins", () => {
    const pairs: [Message, Message][] = [
      [
        { role: "assistant", content: null, tool_calls: [call("ab", "c", "{}")] },
        { role: "assistant", content: null, tool_calls: [call("a", "bc", "{}")] },
      ],
      [
        { role: "assistant", content: null, tool_calls: [call("a", "b", "{}")] },
        { role: "assistant", content: "", tool_calls: [call("a", "b", "{}")] },
      ],
      [
        { role: "tool", content: "x1", tool_call_id: "2" },
        { role: "tool", content: "x", tool_call_id: "12" },
      ],
      [
        { role: "user", content: "hi" },
        { role: "system", content: "hi" },
      ],
      [
        { role: "assistant", content: "a" },
        { role: "assistant", content: "a", reasoning: [{ provider: "p", type: "thinking", data: "x" }] },
      ],
    ];
    for (const [a, b] of pairs) expect(messageHash(a)).not.toBe(messageHash(b));
  });

  it("are the same for equal messages, whatever their key order", () => {
    const a: Message = { role: "tool", content: "{}", tool_call_id: "c1" };
    const b = { tool_call_id: "c1", content: "{}", role: "tool" } as Message;
    expect(messageHash(a)).toBe(messageHash(b));
  });

  it("chain in order: the same messages in another order give another digest and fingerprint", () => {
    const x: Message = { role: "user", content: "x" };
    const y: Message = { role: "assistant", content: "y" };
    expect(messagesDigest([x, y])).not.toBe(messagesDigest([y, x]));
    expect(requestFingerprint({ messages: [x, y] })).not.toBe(requestFingerprint({ messages: [y, x] }));
    expect(requestFingerprint({ messages: [x, y] })).toBe(
      requestFingerprint({ messages: [{ ...x }, { ...y }] }),
    );
  });
});
