import { describe, expect, it } from "vitest";
import { AuthorityMender, huffmanDecode, mendAuthority, mendHeaderBlock } from "./h2-authority.ts";

const hex = (s: string) => Uint8Array.from(Buffer.from(s.replace(/\s+/g, ""), "hex"));
const text = (b: Uint8Array | undefined) => (b ? Buffer.from(b).toString("latin1") : undefined);

/**
 * The start of a connection exactly as etcdctl 3.4.23 sent it for `endpoint status --cluster`
 * (captured on loopback): the preface, an empty SETTINGS, a WINDOW_UPDATE, and the HEADERS of
 * Maintenance.Status, whose `:authority` is the Huffman-coded `http://127.0.0.1:23898`.
 */
const preface = hex("505249202a20485454502f322e300d0a0d0a534d0d0a0d0a");
const settings = hex("000000040000000000");
const windowUpdate = hex("00000408 00 00000000 0000ffff"); // a connection-level increment
const headersBlock = hex(`
  8386 4597 60a9 2488 2d9d cb65 71af a066 a925 a875 10ac 6e48 d36a 3f
  4190 9d29 aee3 0c04 4eae 05c0 b86e 0997 9f
  7b5f 8b1d 75d0 620d 263d 4c4d 6564 7a8b 9aca c8b4 c760 2bb2 caec ff
  4002 7465 864d 8335 05b1 1f
  4089 9aca c8b2 4d49 4f6a 7f86 69f7 9a78 2d5b
  408d 2506 2d49 5875 996e e5b1 063d 5f03 332e 34`);
const headersFrame = Uint8Array.from([0, 0, headersBlock.length, 0x1, 0x4, 0, 0, 0, 1, ...headersBlock]);

/** The header list of a block, decoded by a minimal reader: for checking what the server gets. */
function literalValues(block: Uint8Array): string[] {
  // Only what these tests send: indexed fields and literals with an indexed or literal name.
  const values: string[] = [];
  let at = 0;
  const int = (n: number) => {
    const max = 2 ** n - 1;
    let v = block[at++] & max;
    if (v < max) return v;
    for (let shift = 0; ; shift += 7) {
      const byte = block[at++];
      v += (byte & 0x7f) * 2 ** shift;
      if (!(byte & 0x80)) return v;
    }
  };
  const str = () => {
    const huff = block[at] & 0x80;
    const len = int(7);
    const raw = block.subarray(at, at + len);
    at += len;
    return text(huff ? huffmanDecode(raw) : raw)!;
  };
  while (at < block.length) {
    const first = block[at];
    if (first & 0x80) {
      int(7);
      continue;
    }
    const index = int(first & 0x40 ? 6 : 4);
    const name = index === 0 ? str() : `#${index}`;
    values.push(`${name}=${str()}`);
  }
  return values;
}

describe("HPACK Huffman decoding", () => {
  it("decodes what grpc-go sent, and refuses bad padding or an EOS inside the string", () => {
    expect(text(huffmanDecode(hex("9d29aee30c044eae05c0b86e09979f7b")))).toBe("http://127.0.0.1:23898");
    expect(text(huffmanDecode(hex("60a924882d9dcb6571afa066a925a87510ac6e48d36a3f")))).toBe(
      "/etcdserverpb.Maintenance/Status",
    );
    expect(huffmanDecode(hex("9d29aee30c044eae05c0b86e09979f7a"))).toBeUndefined(); // padding not all ones
    expect(huffmanDecode(hex("ffffffff"))).toBeUndefined(); // EOS (30 one bits)
  });
});

describe(":authority mending", () => {
  it("leaves a host:port alone and replaces each refused byte, keeping the length", () => {
    expect(mendAuthority(Buffer.from("127.0.0.1:2379"))).toBeUndefined();
    expect(mendAuthority(Buffer.from("[::1]:2379"))).toBeUndefined();
    expect(text(mendAuthority(Buffer.from("http://127.0.0.1:2379")))).toBe("http:__127.0.0.1:2379");
  });

  it("rewrites only the :authority literal of etcdctl's header block", () => {
    const mended = mendHeaderBlock(headersBlock)!;
    expect(literalValues(headersBlock)).toContain("#1=http://127.0.0.1:23898");
    const before = literalValues(headersBlock);
    const after = literalValues(mended);
    expect(after).toEqual(before.map((v) => (v.startsWith("#1=") ? "#1=http:__127.0.0.1:23898" : v)));
    // A block that needs nothing, or that cannot be read, is left as it came.
    expect(mendHeaderBlock(mended)).toBeUndefined();
    expect(mendHeaderBlock(headersBlock.subarray(0, 20))).toBeUndefined();
  });
});

describe("AuthorityMender: the client's side of a connection", () => {
  const connection = Buffer.concat([preface, settings, windowUpdate, headersFrame]);

  function run(chunks: Uint8Array[]): Buffer {
    const m = new AuthorityMender();
    return Buffer.concat(chunks.flatMap((c) => m.push(c)));
  }

  it("passes other frames byte for byte and re-frames the mended block, however the bytes arrive", () => {
    const whole = run([connection]);
    const head = preface.length + settings.length + windowUpdate.length;
    expect(whole.subarray(0, head)).toEqual(connection.subarray(0, head));
    const frame = whole.subarray(head);
    const length = (frame[0] << 16) | (frame[1] << 8) | frame[2];
    expect([frame.length, frame[3], frame[4], frame.readUInt32BE(5)]).toEqual([9 + length, 0x1, 0x4, 1]);
    expect(literalValues(frame.subarray(9))).toContain("#1=http:__127.0.0.1:23898");
    // One byte at a time gives the same bytes.
    expect(run([...connection].map((b) => Uint8Array.of(b)))).toEqual(whole);
  });

  it("joins a block split over CONTINUATION frames, and keeps END_STREAM", () => {
    const [a, b] = [headersBlock.subarray(0, 30), headersBlock.subarray(30)];
    const split = Buffer.concat([
      preface,
      Uint8Array.from([0, 0, a.length, 0x1, 0x1, 0, 0, 0, 3, ...a]), // HEADERS, END_STREAM, no END_HEADERS
      Uint8Array.from([0, 0, b.length, 0x9, 0x4, 0, 0, 0, 3, ...b]), // CONTINUATION, END_HEADERS
    ]);
    const out = run([split]).subarray(preface.length);
    expect([out[3], out[4], out.readUInt32BE(5)]).toEqual([0x1, 0x5, 3]);
    expect(literalValues(out.subarray(9))).toContain("#1=http:__127.0.0.1:23898");
  });

  it("hands on the frames that need nothing as the one piece they arrived in", () => {
    const plain = Buffer.concat([preface, settings, windowUpdate]);
    const pieces = new AuthorityMender().push(plain);
    expect(pieces).toHaveLength(1);
    expect(Buffer.from(pieces[0])).toEqual(plain);
    // Around a mended block: the frames before it, the new block.
    expect(new AuthorityMender().push(connection)).toHaveLength(3);
  });

  it("passes a connection that is not HTTP/2 through unchanged", () => {
    const http1 = Buffer.from("GET / HTTP/1.1\r\nHost: x\r\n\r\n");
    expect(run([http1.subarray(0, 5), http1.subarray(5)])).toEqual(http1);
  });
});
