import { type messages, type PGlite, protocol, types } from "@electric-sql/pglite";

/** PostgreSQL's type oid of `bytea`. */
const BYTEA = 17;

/** A parameter as PGlite's `Bind` serializer takes it: text, binary, or SQL NULL. */
export type WireValue = string | Uint8Array | null;

/** The result columns of a prepared statement, from its row description. */
export interface ResultColumns {
  readonly names: readonly string[];
  readonly oids: readonly number[];
}

/** The names and type oids of a row description's fields. */
export function resultColumns(description: messages.RowDescriptionMessage): ResultColumns {
  return {
    names: description.fields.map((field) => field.name),
    oids: description.fields.map((field) => field.dataTypeID),
  };
}

/**
 * The parameters of a statement as the wire carries them, given their type oids from the
 * statement's description: each through the database's serializer for its type, as
 * `PGlite.query` does, except a `bytea` given as bytes while PGlite's own `bytea` serializer is in
 * place, which goes as it is in binary format (PGlite's hex encoding costs tens of microseconds per
 * few hundred bytes).
 */
export function wireValues(db: PGlite, oids: readonly number[], parameters: readonly unknown[]): WireValue[] {
  const out: WireValue[] = new Array(parameters.length);
  for (let i = 0; i < parameters.length; i++) {
    const value = parameters[i];
    const oid = oids[i]!;
    if (value === null || value === undefined) out[i] = null;
    else if (
      oid === BYTEA &&
      value instanceof Uint8Array &&
      db.serializers[BYTEA] === types.serializers[BYTEA]
    )
      out[i] = value;
    else {
      const serializer = db.serializers[oid];
      out[i] = serializer ? serializer(value) : String(value);
    }
  }
  return out;
}

/** `Execute` (every row of the unnamed portal) then `Sync`, the same bytes after every `Bind`. */
const EXECUTE_SYNC = Buffer.concat([protocol.serialize.execute({}), protocol.serialize.sync()]);

/**
 * One `Bind` of `statement` to the unnamed portal, then `Execute` and `Sync`, in one buffer: text
 * values in text format, bytes in binary, results in text. This is the message PGlite's protocol
 * serializer writes, written here in one pass: theirs costs about 40 us for the 30 parameters of a
 * submission, this about 5.
 */
export function bindExecuteSync(statement: string, values: readonly WireValue[]): Uint8Array {
  const lengths = new Array<number>(values.length);
  // Length field, statement name and its NUL, portal NUL, two counts, format codes, result formats.
  let length = 4 + Buffer.byteLength(statement) + 1 + 1 + 2 + 2 * values.length + 2 + 4;
  for (let i = 0; i < values.length; i++) {
    const value = values[i]!;
    const n = value === null ? -1 : typeof value === "string" ? Buffer.byteLength(value) : value.byteLength;
    lengths[i] = n;
    length += 4 + Math.max(n, 0);
  }
  const out = Buffer.allocUnsafe(1 + length + EXECUTE_SYNC.length);
  out[0] = 0x42; // 'B'
  let at = out.writeInt32BE(length, 1);
  out[at++] = 0; // the unnamed portal
  at += out.write(statement, at);
  out[at++] = 0;
  at = out.writeInt16BE(values.length, at);
  for (const value of values) at = out.writeInt16BE(value instanceof Uint8Array ? 1 : 0, at);
  at = out.writeInt16BE(values.length, at);
  for (let i = 0; i < values.length; i++) {
    const value = values[i]!;
    at = out.writeInt32BE(lengths[i]!, at);
    if (typeof value === "string") at += out.write(value, at);
    else if (value !== null) {
      out.set(value, at);
      at += value.byteLength;
    }
  }
  at = out.writeInt16BE(1, at); // one result format code for every column: text
  at = out.writeInt16BE(0, at);
  out.set(EXECUTE_SYNC, at);
  return out;
}

/** `bytea` in its hex output form (`\x…`, the default `bytea_output`) to bytes, natively. */
function parseByteaHex(text: string): Uint8Array {
  const out = new Uint8Array((text.length - 2) >> 1);
  Buffer.from(out.buffer, out.byteOffset, out.byteLength).write(text.slice(2), "hex");
  return out;
}

/** The commands whose completion tag ends in a row count that `numAffectedRows` reports. */
const COUNTED = new Set(["INSERT", "UPDATE", "DELETE", "COPY", "MERGE"]);

/** What one statement's execution gave back, read from the backend's bytes. */
export interface RawResult<R> {
  readonly rows: R[];
  readonly affectedRows: number;
  /** `NotificationResponse`s among the bytes (channel, payload), in order: no one else saw them. */
  readonly notifications: (readonly [string, string])[];
  /** The statement failed: the bytes hold an `ErrorResponse` (see {@link databaseError}). */
  readonly failed: boolean;
}

/**
 * Reads the backend messages of one statement's execution (`BindComplete`, data rows, the
 * command's completion, `ReadyForQuery`; or an error) straight from their bytes, without PGlite's
 * protocol parser, which costs several times what PostgreSQL spent on a key lookup. Each value goes
 * through the database's parser for its type as `PGlite.query` does, except `bytea` while PGlite's
 * own parser is in place, decoded natively.
 */
export function readRaw<R>(db: PGlite, columns: ResultColumns | undefined, bytes: Buffer): RawResult<R> {
  const rows: R[] = [];
  const notifications: (readonly [string, string])[] = [];
  let affectedRows = 0;
  let failed = false;
  const parsers = db.parsers;
  const fastBytea = parsers[BYTEA] === types.parsers[BYTEA];
  let at = 0;
  while (at + 5 <= bytes.length) {
    const code = bytes[at]!;
    const end = at + 1 + bytes.readInt32BE(at + 1);
    let p = at + 5;
    if (code === 0x44 /* D: DataRow */ && columns) {
      const count = bytes.readInt16BE(p);
      p += 2;
      const row: Record<string, unknown> = {};
      for (let i = 0; i < count; i++) {
        const length = bytes.readInt32BE(p);
        p += 4;
        const name = columns.names[i]!;
        if (length < 0) {
          row[name] = null;
          continue;
        }
        const text = bytes.toString("utf8", p, p + length);
        p += length;
        const oid = columns.oids[i]!;
        if (oid === BYTEA && fastBytea && text.startsWith("\\x")) row[name] = parseByteaHex(text);
        else {
          const parser = parsers[oid] ?? types.parsers[oid];
          row[name] = parser ? parser(text, oid) : text;
        }
      }
      rows.push(row as R);
    } else if (code === 0x43 /* C: CommandComplete */) {
      const tag = bytes.toString("utf8", p, end - 1);
      const count = Number.parseInt(tag.slice(tag.lastIndexOf(" ") + 1), 10);
      if (COUNTED.has(tag.slice(0, tag.indexOf(" "))) && !Number.isNaN(count)) affectedRows += count;
    } else if (code === 0x41 /* A: NotificationResponse */) {
      p += 4; // the sender's process id
      const channelEnd = bytes.indexOf(0, p);
      const payloadEnd = bytes.indexOf(0, channelEnd + 1);
      notifications.push([
        bytes.toString("utf8", p, channelEnd),
        bytes.toString("utf8", channelEnd + 1, payloadEnd),
      ]);
    } else if (code === 0x45 /* E: ErrorResponse */) failed = true;
    at = end;
  }
  return { rows, affectedRows, notifications, failed };
}

/** The first error among backend bytes, as PGlite's own protocol parser makes it (and throws it). */
export function databaseError(bytes: Uint8Array): messages.DatabaseError | undefined {
  let error: messages.DatabaseError | undefined;
  new protocol.Parser().parse(bytes, (message) => {
    if (!error && message.name === "error") error = message as messages.DatabaseError;
  });
  return error;
}
