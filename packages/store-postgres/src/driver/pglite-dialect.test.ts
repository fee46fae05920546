import { MemoryFS, messages, PGlite, types } from "@electric-sql/pglite";
import { Kysely, sql } from "kysely";
import { afterAll, describe, expect, it } from "vitest";
import { PGliteDialect } from "./pglite-dialect.js";

const open: PGlite[] = [];
async function database(options: ConstructorParameters<typeof PGlite>[0] = {}) {
  const db = await PGlite.create(options);
  open.push(db);
  return { db, k: new Kysely<unknown>({ dialect: new PGliteDialect(db) }) };
}
// One database for the cases that need no options of their own (each uses its own tables).
let shared: Promise<Awaited<ReturnType<typeof database>>> | undefined;
const sharedDatabase = () => {
  shared ??= database();
  return shared;
};
afterAll(async () => {
  for (const db of open.splice(0)) await db.close();
});

const bytes = (n: number) => Uint8Array.from({ length: n }, (_, i) => (i * 31 + 7) & 255);

describe("PGliteDialect", () => {
  it("sends bytea parameters as bytes and reads them back equal, as PGlite.query reads them", async () => {
    const { db, k } = await sharedDatabase();
    await db.exec("create table b (id int primary key, v bytea)");
    const values = [bytes(0), bytes(1), bytes(4_000), Buffer.from(bytes(300)), null];
    for (const [id, v] of values.entries()) await sql`insert into b values (${id}, ${v})`.execute(k);
    // Stored as the bytes themselves, not as the text of their hex form.
    const lengths = await db.query<{ n: number | null }>("select octet_length(v) as n from b order by id");
    expect(lengths.rows.map((r) => r.n)).toEqual([0, 1, 4_000, 300, null]);
    const read = await sql<{ v: Uint8Array | null }>`select v from b where id >= ${0} order by id`.execute(k);
    const theirs = await db.query<{ v: Uint8Array | null }>("select v from b order by id");
    expect(read.rows.map((r) => r.v)).toEqual(theirs.rows.map((r) => r.v));
    expect(read.rows.map((r) => (r.v ? [...r.v] : null))).toEqual(values.map((v) => (v ? [...v] : null)));
    expect(read.rows[2]!.v).toBeInstanceOf(Uint8Array);
  });

  it("gives every type's values as PGlite.query gives them (its parsers, column names, nulls)", async () => {
    const { db, k } = await sharedDatabase();
    await db.exec(`create table t (
      i int, b bigint, n numeric, f float8, t text, ts timestamptz, d date, ok bool,
      j jsonb, u uuid, a text[], x bytea)`);
    await db.exec(`insert into t values
      (1, 9007199254740991, 1.5, 2.25, 'é"\\', '2026-01-02T03:04:05.678Z', '2026-01-02', true,
       '{"a":[1,"x"]}', '00000000-0000-4000-8000-000000000001', '{a,"b c",null}', '\\x00ff10'),
      (null, null, null, null, null, null, null, null, null, null, null, null)`);
    const query = sql`select i, b, n, f, t, ts, d, ok, j, u, a, x, i as i from t where ${1}::int = 1 order by i nulls last`;
    const theirs = await db.query(query.compile(k).sql, [1]);
    expect(theirs.rows).toHaveLength(2);
    // Twice: from the second execution on, the prepared statement runs without describing its portal.
    for (let round = 0; round < 2; round++) expect((await query.execute(k)).rows).toEqual(theirs.rows);
  });

  it("sends text parameters as PGlite.query sends them (multi-byte, empty, many at once)", async () => {
    const { db, k } = await sharedDatabase();
    await db.exec("create table p (who text, i int, v text)");
    const texts = ["", "plain", "é", "日本語", 'emoji 🦀 and \\ and "', "x".repeat(20_000)];
    for (const [i, v] of texts.entries()) {
      await sql`insert into p values (${"ours"}, ${i}, ${v})`.execute(k);
      await db.query("insert into p values ($1, $2, $3)", ["theirs", i, v]);
    }
    const stored = await db.query<{ who: string; v: string; n: number }>(
      "select who, v, octet_length(v) as n from p order by who, i",
    );
    const of = (who: string) => stored.rows.filter((r) => r.who === who).map((r) => [r.v, r.n]);
    expect(of("ours")).toEqual(of("theirs"));
    expect(of("ours").map(([v]) => v)).toEqual(texts);
    // Thirty parameters in one statement, with nulls between them.
    const many = Array.from({ length: 30 }, (_, i) => (i % 7 === 3 ? null : `v${i}`));
    const row = await sql<Record<string, string | null>>`select ${sql.join(
      many.map((v, i) => sql`${v}::text as ${sql.ref(`c${i}`)}`),
    )}`.execute(k);
    expect(Object.values(row.rows[0]!)).toEqual(many);
  });

  it("delivers the notifications a statement's commit sends to PGlite's listeners, each once and in order", async () => {
    const { db, k } = await sharedDatabase();
    const heard: string[] = [];
    const stop = await db.listen("dialect_test", (payload) => heard.push(payload));
    const payloads = ["one", 'with "quotes", {braces} and \\ backslash', "日本語 🦀", "", "one"];
    await sql`select pg_notify(${"dialect_test"}, p) from unnest(${payloads}::text[]) with ordinality as n(p, i) order by i`.execute(
      k,
    );
    // In a transaction they go at the commit.
    await k.transaction().execute(async (tx) => {
      await sql`select pg_notify(${"dialect_test"}, ${"in tx"})`.execute(tx);
      await sql`select pg_notify(${"other_channel"}, ${"not heard"})`.execute(tx);
      await new Promise((resolve) => setTimeout(resolve, 20));
      expect(heard).not.toContain("in tx");
    });
    await new Promise((resolve) => setTimeout(resolve, 20));
    // The same statement again: it is known to notify now, and goes through PGlite's parser.
    for (const p of ["again 1", "again 2"]) await sql`select pg_notify(${"dialect_test"}, ${p})`.execute(k);
    await new Promise((resolve) => setTimeout(resolve, 20));
    // PostgreSQL folds a repeated (channel, payload) of one transaction into one.
    expect(heard).toEqual(["one", payloads[1], payloads[2], "", "in tx", "again 1", "again 2"]);
    await stop();
  });

  it("fails a statement with PostgreSQL's error as PGlite gives it, and the next statement runs", async () => {
    const { db, k } = await sharedDatabase();
    await db.exec("create table u (id int primary key)");
    await sql`insert into u values (${1})`.execute(k);
    const ours = await sql`insert into u values (${1})`.execute(k).catch((e: unknown) => e);
    const theirs = await db.query("insert into u values ($1)", [1]).catch((e: unknown) => e);
    expect(ours).toBeInstanceOf(messages.DatabaseError);
    expect(ours).toMatchObject({
      code: "23505",
      constraint: "u_pkey",
      detail: "Key (id)=(1) already exists.",
    });
    const fields = ["code", "message", "detail", "constraint", "table", "schema", "severity"] as const;
    const pick = (e: unknown) =>
      Object.fromEntries(fields.map((f) => [f, (e as Record<string, unknown>)[f]]));
    expect(pick(ours)).toEqual(pick(theirs));
    expect(
      (await sql<{ n: number }>`select count(*)::int as n from u where id > ${0}`.execute(k)).rows,
    ).toEqual([{ n: 1 }]);
  });

  it("reports the affected rows of inserts, updates and deletes, and none for a select", async () => {
    const { db, k } = await sharedDatabase();
    await db.exec("create table c (id int)");
    const n = async (q: ReturnType<typeof sql>) => (await q.execute(k)).numAffectedRows;
    expect(await n(sql`insert into c select g from generate_series(1, ${3}) g`)).toBe(3n);
    expect(await n(sql`update c set id = id + ${1} where id > ${1}`)).toBe(2n);
    expect(await n(sql`delete from c where id = ${4}`)).toBe(1n);
    expect(await n(sql`select * from c where id > ${0}`)).toBe(0n);
    expect(await n(sql`with x as (insert into c values (${9}) returning id) select id from x`)).toBe(0n);
  });

  it("keeps a serializer and a parser for bytea given to the database", async () => {
    const seen: unknown[] = [];
    const { db, k } = await database({
      serializers: {
        17: (x: unknown) => {
          seen.push(x);
          return types.serializers[17]!(x);
        },
      },
      parsers: { 17: (x: string) => `parsed:${x}` },
    });
    await db.exec("create table b (v bytea)");
    await sql`insert into b values (${bytes(2)})`.execute(k);
    expect(seen).toHaveLength(1);
    const read = await sql<{ v: unknown }>`select v from b where ${1} = 1`.execute(k);
    expect(read.rows).toEqual([{ v: "parsed:\\x0726" }]);
  });

  it("syncs a file system of its own after every statement, as PGlite does", async () => {
    class CountingFS extends MemoryFS {
      syncs = 0;
      override async syncToFs(): Promise<void> {
        this.syncs++;
      }
    }
    const fs = new CountingFS();
    const { k } = await database({ fs });
    const before = fs.syncs;
    for (let i = 0; i < 3; i++) await sql`select ${i}::int as i`.execute(k);
    expect(fs.syncs - before).toBeGreaterThanOrEqual(3);
  });

  it("a statement prepared before its table changed runs again with the new columns outside a transaction", async () => {
    const { db, k } = await sharedDatabase();
    await db.exec("create table s (a int); insert into s values (1)");
    const read = () => sql<Record<string, unknown>>`select * from s where a = ${1}`.execute(k);
    expect((await read()).rows).toEqual([{ a: 1 }]);
    await db.exec("alter table s add column b text default 'x'");
    expect((await read()).rows).toEqual([{ a: 1, b: "x" }]);
    await db.exec("alter table s add column c int default 2");
    await expect(
      k.transaction().execute(async (tx) => sql`select * from s where a = ${1}`.execute(tx)),
    ).rejects.toMatchObject({ code: "0A000" });
    expect((await read()).rows).toEqual([{ a: 1, b: "x", c: 2 }]);
  });
});
