/**
 * The binary pieces of a snapshot: columns of numbers (little-endian 64-bit floats or 32-bit
 * unsigned integers) and string tables (the offsets of `count` strings, then their UTF-8 bytes).
 * Columns are copied out of the file's bytes in one move on little-endian hosts (all common ones)
 * and read number by number elsewhere. A string table keeps its bytes and decodes one string when
 * asked, so opening a store does not decode every entry's text.
 */

const LITTLE_ENDIAN = new Uint8Array(new Uint16Array([1]).buffer)[0] === 1;

/** Why bytes do not hold the column or table they should; the caller names the section. */
export class ColumnProblem extends Error {}

/** The `count` little-endian 64-bit floats of `bytes`, copied. @throws {ColumnProblem} */
export function readFloat64s(bytes: Uint8Array, count: number): Float64Array {
  if (bytes.length !== count * 8) {
    throw new ColumnProblem(`holds ${bytes.length} bytes, not ${count} 8-byte numbers`);
  }
  const out = new Float64Array(count);
  if (LITTLE_ENDIAN) new Uint8Array(out.buffer).set(bytes);
  else {
    const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.length);
    for (let i = 0; i < count; i++) out[i] = view.getFloat64(i * 8, true);
  }
  return out;
}

/** The `count` little-endian 32-bit unsigned integers of `bytes`, copied. @throws {ColumnProblem} */
export function readUint32s(bytes: Uint8Array, count: number): Uint32Array {
  if (bytes.length !== count * 4) {
    throw new ColumnProblem(`holds ${bytes.length} bytes, not ${count} 4-byte numbers`);
  }
  const out = new Uint32Array(count);
  if (LITTLE_ENDIAN) new Uint8Array(out.buffer).set(bytes);
  else {
    const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.length);
    for (let i = 0; i < count; i++) out[i] = view.getUint32(i * 4, true);
  }
  return out;
}

/** The little-endian bytes of `values` (a view of them on little-endian hosts: do not change them after). */
export function columnBytes(values: Float64Array | Uint32Array): Uint8Array {
  if (LITTLE_ENDIAN) return new Uint8Array(values.buffer, values.byteOffset, values.byteLength);
  const out = new Uint8Array(values.byteLength);
  const view = new DataView(out.buffer);
  const size = values.BYTES_PER_ELEMENT;
  for (let i = 0; i < values.length; i++) {
    if (size === 8) view.setFloat64(i * 8, values[i]!, true);
    else view.setUint32(i * 4, values[i]!, true);
  }
  return out;
}

/** `count` strings as UTF-8 bytes with their offsets; a string is decoded each time it is read. */
export class StringTable {
  /** `offsets[i]` to `offsets[i + 1]` are the bytes of string `i`. */
  readonly offsets: Uint32Array;
  readonly bytes: Buffer;

  constructor(offsets: Uint32Array, bytes: Buffer) {
    this.offsets = offsets;
    this.bytes = bytes;
  }

  get count(): number {
    return this.offsets.length - 1;
  }

  /** String `i`. */
  get(i: number): string {
    return this.bytes.toString("utf8", this.offsets[i]!, this.offsets[i + 1]!);
  }

  /** Size of string `i` in bytes. */
  byteLength(i: number): number {
    return this.offsets[i + 1]! - this.offsets[i]!;
  }

  /** Every string, decoded. */
  all(): string[] {
    const out = new Array<string>(this.count);
    for (let i = 0; i < out.length; i++) out[i] = this.get(i);
    return out;
  }

  /**
   * The table of `count` strings in `section` (offsets as 32-bit integers, then the bytes). Its
   * bytes are a view of `section`, which must not change.
   *
   * @throws {ColumnProblem} when the offsets do not start at 0, decrease, or miss the end of the bytes.
   */
  static read(section: Uint8Array, count: number): StringTable {
    const head = (count + 1) * 4;
    if (section.length < head) {
      throw new ColumnProblem(`holds ${section.length} bytes, too few for the offsets of ${count} strings`);
    }
    const offsets = readUint32s(section.subarray(0, head), count + 1);
    const size = section.length - head;
    if (offsets[0] !== 0 || offsets[count] !== size) {
      throw new ColumnProblem(`has offsets that do not span its ${size} bytes of text`);
    }
    for (let i = 0; i < count; i++) {
      if (offsets[i + 1]! < offsets[i]!) throw new ColumnProblem(`has decreasing offsets at string ${i}`);
    }
    const bytes = Buffer.from(section.buffer, section.byteOffset + head, size);
    return new StringTable(offsets, bytes);
  }
}

/** Builds a string table: strings are encoded, or copied as bytes from another table. */
export class StringTableWriter {
  private bytes = Buffer.allocUnsafe(1 << 16);
  private length = 0;
  private offsets = new Uint32Array(1024);
  private count = 0;

  /** Appends `text`. */
  add(text: string): void {
    // UTF-8 takes at most 3 bytes per UTF-16 unit.
    this.reserve(text.length * 3);
    this.length += this.bytes.write(text, this.length, "utf8");
    this.close();
  }

  /** Appends strings `from` to `to` (exclusive) of `table` without decoding them, in one copy. */
  copyRange(table: StringTable, from: number, to: number): void {
    const start = table.offsets[from]!;
    const end = table.offsets[to]!;
    this.reserve(end - start);
    const shift = this.length - start;
    this.length += table.bytes.copy(this.bytes, this.length, start, end);
    this.reserveRows(to - from);
    for (let i = from + 1; i <= to; i++) this.offsets[++this.count] = table.offsets[i]! + shift;
  }

  /** The table as a section: the offsets, then the bytes (views of this writer's buffers). */
  finish(): Uint8Array[] {
    return [columnBytes(this.offsets.subarray(0, this.count + 1)), this.bytes.subarray(0, this.length)];
  }

  /** The table, to read back (views of this writer's buffers). */
  table(): StringTable {
    return new StringTable(this.offsets.slice(0, this.count + 1), this.bytes.subarray(0, this.length));
  }

  private reserve(bytes: number): void {
    if (this.length + bytes > 0xffff_ffff) throw new RangeError("a string table cannot exceed 4 GiB");
    if (this.length + bytes <= this.bytes.length) return;
    const grown = Buffer.allocUnsafe(Math.max(this.bytes.length * 2, this.length + bytes));
    this.bytes.copy(grown, 0, 0, this.length);
    this.bytes = grown;
  }

  private close(): void {
    this.reserveRows(1);
    this.offsets[++this.count] = this.length;
  }

  private reserveRows(rows: number): void {
    if (this.count + 1 + rows <= this.offsets.length) return;
    const grown = new Uint32Array(Math.max(this.offsets.length * 2, this.count + 1 + rows));
    grown.set(this.offsets.subarray(0, this.count + 1));
    this.offsets = grown;
  }
}
