import { describe, expect, it } from "vitest";
import { FrameDemuxer } from "./frame-demuxer.js";

function frame(stream: number, text: string | Uint8Array): Uint8Array {
  const payload = typeof text === "string" ? new TextEncoder().encode(text) : text;
  const out = new Uint8Array(8 + payload.length);
  out[0] = stream;
  new DataView(out.buffer).setUint32(4, payload.length);
  out.set(payload, 8);
  return out;
}

function concat(...parts: Uint8Array[]): Uint8Array {
  const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
  let at = 0;
  for (const part of parts) {
    out.set(part, at);
    at += part.length;
  }
  return out;
}

function collect(): { demuxer: FrameDemuxer; out: () => string; err: () => string } {
  const out: Uint8Array[] = [];
  const err: Uint8Array[] = [];
  const demuxer = new FrameDemuxer((stream, payload) => (stream === 2 ? err : out).push(payload.slice()));
  const text = (parts: Uint8Array[]) => new TextDecoder().decode(concat(...parts));
  return { demuxer, out: () => text(out), err: () => text(err) };
}

describe("FrameDemuxer", () => {
  const stream = concat(frame(1, "out one\n"), frame(2, "err 東京\n"), frame(1, ""), frame(1, "out two 🚀"));

  it("splits frames that arrive together into stdout and stderr", () => {
    const { demuxer, out, err } = collect();
    demuxer.push(stream);
    expect(out()).toBe("out one\nout two 🚀");
    expect(err()).toBe("err 東京\n");
    expect(demuxer.buffered).toBe(0);
  });

  it("reassembles frames split at every possible byte boundary", () => {
    for (let cut = 1; cut < stream.length; cut++) {
      const { demuxer, out, err } = collect();
      demuxer.push(stream.subarray(0, cut));
      demuxer.push(stream.subarray(cut));
      expect(out(), `cut at ${cut}`).toBe("out one\nout two 🚀");
      expect(err(), `cut at ${cut}`).toBe("err 東京\n");
    }
  });

  it("reassembles a stream delivered one byte at a time", () => {
    const { demuxer, out, err } = collect();
    for (let i = 0; i < stream.length; i++) demuxer.push(stream.subarray(i, i + 1));
    expect(out()).toBe("out one\nout two 🚀");
    expect(err()).toBe("err 東京\n");
  });

  it("reads payload lengths above 16 MiB as unsigned", () => {
    const header = frame(1, "");
    new DataView(header.buffer).setUint32(4, 0x80000001);
    const { demuxer } = collect();
    demuxer.push(header);
    expect(demuxer.buffered).toBe(8);
  });

  it("reports stdin echoes (type 0) as stdout and refuses unknown stream types", () => {
    const { demuxer, out } = collect();
    demuxer.push(frame(0, "echo"));
    expect(out()).toBe("echo");
    expect(() => demuxer.push(frame(7, "x"))).toThrow(/unknown stream type 7/);
  });

  it("keeps an incomplete frame buffered until the rest arrives", () => {
    const { demuxer, out } = collect();
    const whole = frame(1, "partial");
    demuxer.push(whole.subarray(0, 10));
    expect(out()).toBe("");
    expect(demuxer.buffered).toBe(10);
    demuxer.push(whole.subarray(10));
    expect(out()).toBe("partial");
  });
});
