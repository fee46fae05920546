/**
 * Splits Docker's multiplexed attach stream (used when a process has no TTY) into stdout and
 * stderr. Each frame is an 8-byte header — stream type (0 stdin, 1 stdout, 2 stderr), three zero
 * bytes, payload length as a big-endian uint32 — followed by the payload. Frames may arrive split
 * across chunks or several to a chunk.
 */
export class FrameDemuxer {
  private pending: Uint8Array = new Uint8Array(0);

  /**
   * @param onFrame - receives each payload with its stream: `1` stdout (a stdin echo, type 0, is
   *   reported as stdout, as Docker's own client does), `2` stderr.
   */
  constructor(private readonly onFrame: (stream: 1 | 2, payload: Uint8Array) => void) {}

  /** Adds bytes as they arrive from the socket. */
  push(chunk: Uint8Array): void {
    let data = chunk;
    if (this.pending.length > 0) {
      data = new Uint8Array(this.pending.length + chunk.length);
      data.set(this.pending, 0);
      data.set(chunk, this.pending.length);
    }
    let at = 0;
    while (data.length - at >= 8) {
      const type = data[at]!;
      const size =
        ((data[at + 4]! << 24) >>> 0) + (data[at + 5]! << 16) + (data[at + 6]! << 8) + data[at + 7]!;
      if (type > 2) {
        throw new Error(`Docker attach stream frame has unknown stream type ${type}; is the exec a TTY?`);
      }
      if (data.length - at - 8 < size) break;
      if (size > 0) this.onFrame(type === 2 ? 2 : 1, data.subarray(at + 8, at + 8 + size));
      at += 8 + size;
    }
    // Copy the remainder: `data` may be the caller's buffer, reused after this call.
    this.pending = data.slice(at);
  }

  /** Bytes of an incomplete frame still waiting for the rest (non-zero when the stream was cut). */
  get buffered(): number {
    return this.pending.length;
  }
}
