import { isSessionId, OpenRathError, Session, type SessionJSON } from "@openrath/core";
import { describe, expect, it } from "vitest";

/** The OpenRathError `fn` throws (failing the test if it throws anything else or nothing). */
function thrown(fn: () => unknown): OpenRathError {
  try {
    fn();
  } catch (error) {
    if (OpenRathError.isInstance(error)) return error;
    throw error;
  }
  return expect.fail("expected an OpenRathError");
}

const uuid = Session.fromUserMessage("x").id;

/** Ids that must never become a session id: each could steer a file name built from it. */
const HOSTILE: [string, string][] = [
  ["a parent-directory step", "../x"],
  ["a deeper escape", "../../../../etc/passwd"],
  ["a dot segment alone", ".."],
  ["an absolute POSIX path", "/tmp/x"],
  ["an absolute Windows path", "C:\\Windows\\x"],
  ["a slash", "a/b"],
  ["a backslash", "a\\b"],
  ["a NUL byte", "a\0b"],
  ["a valid id with a NUL byte after it", `${uuid}\0`],
  ["a valid id with a path after it", `${uuid}/../../x`],
  ["a valid id with a newline after it", `${uuid}\n`],
  ["a valid id in upper case", uuid.toUpperCase()],
  ["a very long id", "a".repeat(1_000_000)],
  ["a name with a slash of id length", `${uuid.slice(0, 35)}/`],
];

/** `session`'s JSON with its id (and the lineage node that carries it) replaced by `id`. */
function withId(session: Session, id: string): SessionJSON {
  const json = session.toJSON();
  return {
    ...json,
    id,
    lineage: json.lineage.map((n) => (n.id === json.id ? { ...n, id } : n)),
  };
}

describe("Session ids from outside", () => {
  it("are the ids core makes: UUID v7 in lower-case canonical form", () => {
    const made = [Session.empty(), Session.fromUserMessage("q"), Session.empty().fork()];
    for (const s of made) {
      expect(s.id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
      expect(isSessionId(s.id)).toBe(true);
      expect(Session.fromJSON(JSON.stringify(s.toJSON())).id).toBe(s.id);
    }
  });

  it("may be UUIDs of another version (ids made elsewhere as UUID v4 still read)", () => {
    const v4 = "3b241101-e2bb-4255-8caf-4136c566a962";
    expect(isSessionId(v4)).toBe(true);
    expect(Session.fromJSON(withId(Session.fromUserMessage("q"), v4)).id).toBe(v4);
  });

  it.each(HOSTILE)("refuses %s in fromJSON with invalid_session_json naming the value", (_, id) => {
    expect(isSessionId(id)).toBe(false);
    const error = thrown(() => Session.fromJSON(withId(Session.fromUserMessage("q"), id)));
    expect(error.code).toBe("invalid_session_json");
    expect(error.message).toContain("is not a session id");
    expect(error.message).toContain(JSON.stringify(id.slice(0, 80)));
    expect(error.details).toMatchObject({ field: '"id"', length: id.length });
    // The message and details stay short however long the id is.
    expect(error.message.length).toBeLessThan(600);
    expect(String(error.details.value).length).toBeLessThan(200);
  });

  it("refuses them in JSON text too", () => {
    const text = JSON.stringify(withId(Session.fromUserMessage("q"), "../x"));
    expect(thrown(() => Session.fromJSON(text)).message).toContain(
      '"id" is "../x", which is not a session id',
    );
  });

  it("refuses a hostile id on another lineage node, or as a parent", () => {
    const child = Session.fromUserMessage("q").fork();
    const json = child.toJSON();
    const parentId = json.lineage.find((n) => n.id !== json.id)!.id;
    const renamed: SessionJSON = {
      ...json,
      lineage: json.lineage.map((n) => (n.id === parentId ? { ...n, id: "../parent" } : n)),
    };
    expect(thrown(() => Session.fromJSON(renamed)).message).toContain(
      'a lineage node id is "../parent", which is not a session id',
    );
    const reparented: SessionJSON = {
      ...json,
      lineage: json.lineage.map((n) => (n.id === json.id ? { ...n, parents: ["/etc/passwd"] } : n)),
    };
    const error = thrown(() => Session.fromJSON(reparented));
    expect(error.code).toBe("invalid_session_json");
    expect(error.message).toContain(
      `node ${json.id}'s parent id is "/etc/passwd", which is not a session id`,
    );
  });
});
