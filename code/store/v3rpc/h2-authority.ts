/**
 * H2 authority fix — lets etcdctl 3.4's `endpoint status --cluster` reach a Node gRPC server.
 *
 * Solves: with `--cluster`, etcdctl 3.4 dials each member's advertised client URL as given, so
 * grpc-go sends the whole URL as the HTTP/2 `:authority` of every request
 * (`http://127.0.0.1:2379`). RFC 9113 says `:authority` holds only `host[:port]`; Go's HTTP/2
 * server does not check it, but the nghttp2 library under Node's http2 does, and answers each such
 * request with RST_STREAM(PROTOCOL_ERROR) before Node — let alone gRPC — sees it. Node offers no
 * option to relax that check. So the bytes are mended before they reach Node: this file reads the
 * client's side of each connection, finds `:authority` fields whose value nghttp2 would refuse,
 * and replaces every character it refuses with `_` (`http:__127.0.0.1:2379`). Nothing on our
 * side reads `:authority`, so the mended value serves as well as any.
 *
 * How, and why it stays small:
 * - HTTP/2 frames are passed on untouched except HEADERS and CONTINUATION, which together carry a
 *   request's header block (HPACK, RFC 7541). A block is re-sent only if a field was mended: as one
 *   HEADERS frame (plus CONTINUATIONs if it outgrows 16 KiB), same stream, same END_STREAM flag;
 *   padding and the deprecated priority fields are dropped.
 * - HPACK keeps a table of recent fields on both sides, and later requests refer to entries by
 *   number: grpc-go sends `:authority` once as a literal "with incremental indexing" and then only
 *   its index. A mended value has exactly the length of the original, so the entry the server adds
 *   has the size the client counted, both tables evict alike, and every later reference names the
 *   mended value. Hence no table needs to be kept here — only literals are looked at.
 * - A literal value may be Huffman-coded (RFC 7541 Appendix B): it is decoded to be checked, and a
 *   mended one is sent as a plain string (a different byte count in the block, the same length in
 *   the table).
 *
 * Invariants:
 * - the bytes passed on decode to the same header list the client sent, except for mended
 *   `:authority` values; every frame other than a mended header block is passed on byte for byte,
 *   in order;
 * - a connection that does not start with the HTTP/2 preface, or a header block this parser
 *   cannot read, is passed on unchanged from there on: nghttp2 then judges it as before.
 *
 * @upstream nghttp2/nghttp2 lib/nghttp2_http.c (check_authority, VALID_AUTHORITY_CHARS)
 * @upstream etcd-io/etcd etcdctl/ctlv3/command/ep_command.go (endpointsFromCluster)
 * @chapter 01-etcd-watch
 */
import type { Socket } from "node:net";
import { Duplex } from "node:stream";

// #region huffman
/**
 * Code lengths in bits of the 257 symbols of HPACK's Huffman code (RFC 7541 Appendix B), bytes
 * 0–255 then EOS. The code is canonical — codes of one length are consecutive, in symbol order,
 * each length continuing where the shorter one stopped — so the lengths determine the codes.
 */
const huffmanLengths = [
  13, 23, 28, 28, 28, 28, 28, 28, 28, 24, 30, 28, 28, 30, 28, 28, 28, 28, 28, 28, 28, 28, 30, 28, 28, 28, 28,
  28, 28, 28, 28, 28, 6, 10, 10, 12, 13, 6, 8, 11, 10, 10, 8, 11, 8, 6, 6, 6, 5, 5, 5, 6, 6, 6, 6, 6, 6, 6, 7,
  8, 15, 6, 12, 10, 13, 6, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 8, 7, 8, 13, 19,
  13, 14, 6, 15, 5, 6, 5, 6, 5, 6, 6, 6, 5, 7, 7, 6, 6, 6, 5, 6, 7, 6, 5, 5, 6, 7, 7, 7, 7, 7, 15, 11, 14, 13,
  28, 20, 22, 20, 20, 22, 22, 22, 23, 22, 23, 23, 23, 23, 23, 24, 23, 24, 24, 22, 23, 24, 23, 23, 23, 23, 21,
  22, 23, 22, 23, 23, 24, 22, 21, 20, 22, 22, 23, 23, 21, 23, 22, 22, 24, 21, 22, 23, 23, 21, 21, 22, 21, 23,
  22, 23, 23, 20, 22, 22, 22, 23, 22, 22, 23, 26, 26, 20, 19, 22, 23, 22, 25, 26, 26, 26, 27, 27, 26, 24, 25,
  19, 21, 26, 27, 27, 26, 27, 24, 21, 21, 26, 26, 28, 27, 27, 27, 20, 24, 20, 21, 22, 21, 21, 23, 22, 22, 25,
  25, 24, 24, 26, 23, 26, 27, 26, 26, 27, 27, 27, 27, 27, 28, 27, 27, 27, 27, 27, 26, 30,
];
const EOS = 256;

/** code → symbol, keyed by length × 2^32 + code (codes are at most 30 bits). */
const huffmanSymbols: Map<number, number> = (() => {
  const order = huffmanLengths
    .map((_, s) => s)
    .sort((a, b) => huffmanLengths[a] - huffmanLengths[b] || a - b);
  const symbols = new Map<number, number>();
  let code = 0;
  let length = huffmanLengths[order[0]];
  for (const [i, s] of order.entries()) {
    if (i > 0) {
      code = (code + 1) * 2 ** (huffmanLengths[s] - length);
      length = huffmanLengths[s];
    }
    symbols.set(length * 2 ** 32 + code, s);
  }
  return symbols;
})();

/** Decodes a Huffman-coded string; undefined if it is not valid HPACK Huffman. */
export function huffmanDecode(bytes: Uint8Array): Uint8Array | undefined {
  const out: number[] = [];
  let code = 0;
  let bits = 0;
  for (const byte of bytes) {
    for (let i = 7; i >= 0; i--) {
      code = code * 2 + ((byte >> i) & 1);
      bits++;
      const symbol = huffmanSymbols.get(bits * 2 ** 32 + code);
      if (symbol === undefined) {
        if (bits > 30) return undefined;
        continue;
      }
      if (symbol === EOS) return undefined; // EOS inside a string is an error (RFC 7541 5.2)
      out.push(symbol);
      code = 0;
      bits = 0;
    }
  }
  // The end is padded with at most 7 one bits (a prefix of EOS).
  if (bits > 7 || code !== 2 ** bits - 1) return undefined;
  return Uint8Array.from(out);
}
// #endregion huffman

// #region authority-check
/**
 * The bytes nghttp2 accepts in `:authority`: RFC 3986's unreserved and sub-delims, and ":[]%".
 * (Its helper table allows "@" too; the one it checks `:authority` with no longer does.)
 */
function isAuthorityByte(c: number): boolean {
  return (
    (c >= 0x30 && c <= 0x39) || // 0-9
    (c >= 0x41 && c <= 0x5a) || // A-Z
    (c >= 0x61 && c <= 0x7a) || // a-z
    "-._~!$&'()*+,;=:[]%".includes(String.fromCharCode(c))
  );
}

/** The value with every byte nghttp2 refuses replaced by `_`, or undefined if it is fine. */
export function mendAuthority(value: Uint8Array): Uint8Array | undefined {
  if (value.every(isAuthorityByte)) return undefined;
  return value.map((c) => (isAuthorityByte(c) ? c : 0x5f));
}
// #endregion authority-check

// #region hpack
/** An HPACK integer with an `n`-bit prefix at `at` (RFC 7541 5.1): its value and end. */
function readInt(b: Uint8Array, at: number, n: number): { value: number; end: number } | undefined {
  if (at >= b.length) return undefined;
  const max = 2 ** n - 1;
  let value = b[at] & max;
  let i = at + 1;
  if (value < max) return { value, end: i };
  for (let shift = 0; ; shift += 7) {
    if (i >= b.length || shift > 28) return undefined;
    const byte = b[i++];
    value += (byte & 0x7f) * 2 ** shift;
    if ((byte & 0x80) === 0) return { value, end: i };
  }
}

function writeInt(out: number[], value: number, n: number, firstBits: number): void {
  const max = 2 ** n - 1;
  if (value < max) {
    out.push(firstBits | value);
    return;
  }
  out.push(firstBits | max);
  let rest = value - max;
  while (rest >= 0x80) {
    out.push((rest % 0x80) | 0x80);
    rest = Math.floor(rest / 0x80);
  }
  out.push(rest);
}

/** A string literal at `at` (RFC 7541 5.2): its decoded bytes and where it ends. */
function readString(b: Uint8Array, at: number): { value: Uint8Array; end: number } | undefined {
  const len = readInt(b, at, 7);
  if (!len || len.end + len.value > b.length) return undefined;
  const raw = b.subarray(len.end, len.end + len.value);
  const value = b[at] & 0x80 ? huffmanDecode(raw) : raw;
  return value && { value, end: len.end + len.value };
}

/** Where the string literal at `at` ends, without decoding it. */
function skipString(b: Uint8Array, at: number): { value?: undefined; end: number } | undefined {
  const len = readInt(b, at, 7);
  if (!len || len.end + len.value > b.length) return undefined;
  return { end: len.end + len.value };
}

const authorityName = new TextEncoder().encode(":authority");
const sameBytes = (a: Uint8Array, b: Uint8Array) => a.length === b.length && a.every((x, i) => x === b[i]);

/**
 * The header block with nghttp2-refused `:authority` values mended; undefined if nothing needed
 * mending, or if the block cannot be read (then it goes on as it came).
 */
export function mendHeaderBlock(block: Uint8Array): Uint8Array | undefined {
  const out: number[] = [];
  let mended = false;
  let at = 0;
  while (at < block.length) {
    const first = block[at];
    let prefix: number; // bits of the name index
    if (first & 0x80)
      prefix = 7; // indexed field: nothing literal
    else if (first & 0x40)
      prefix = 6; // literal with incremental indexing
    else if (first & 0x20)
      prefix = 5; // dynamic table size update
    else prefix = 4; // literal without indexing, or never indexed
    const index = readInt(block, at, prefix);
    if (!index) return undefined;
    if (prefix === 7 || prefix === 5) {
      for (let i = at; i < index.end; i++) out.push(block[i]);
      at = index.end;
      continue;
    }
    let nameEnd = index.end;
    let isAuthority = index.value === 1; // static table entry 1 is `:authority`
    if (index.value === 0) {
      const name = readString(block, index.end);
      if (!name) return undefined;
      isAuthority = sameBytes(name.value, authorityName);
      nameEnd = name.end;
    }
    // Only an :authority value is looked at; any other is stepped over, not Huffman-decoded.
    const value = isAuthority ? readString(block, nameEnd) : skipString(block, nameEnd);
    if (!value) return undefined;
    const fixed = value.value && mendAuthority(value.value);
    for (let i = at; i < (fixed ? nameEnd : value.end); i++) out.push(block[i]);
    if (fixed) {
      writeInt(out, fixed.length, 7, 0x00); // a plain string: H = 0
      for (const c of fixed) out.push(c);
      mended = true;
    }
    at = value.end;
  }
  return mended ? Uint8Array.from(out) : undefined;
}
// #endregion hpack

// #region frames
const PREFACE = new TextEncoder().encode("PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n");
const HEADERS = 0x1;
const CONTINUATION = 0x9;
const END_STREAM = 0x1;
const END_HEADERS = 0x4;
const PADDED = 0x8;
const PRIORITY = 0x20;
/** SETTINGS_MAX_FRAME_SIZE's initial value; a server may allow more, never less. */
const maxFramePayload = 16_384;

function frameHeader(length: number, type: number, flags: number, stream: number): Uint8Array {
  return Uint8Array.of(
    (length >>> 16) & 0xff,
    (length >>> 8) & 0xff,
    length & 0xff,
    type,
    flags,
    (stream >>> 24) & 0x7f,
    (stream >>> 16) & 0xff,
    (stream >>> 8) & 0xff,
    stream & 0xff,
  );
}

/**
 * Reads the client's bytes of one connection, in chunks as they arrive, and returns the bytes to
 * pass on. Keeps a partial frame until it is complete, and the frames of a header block until
 * its END_HEADERS.
 */
export class AuthorityMender {
  private pending: Uint8Array = new Uint8Array(0);
  private prefaceChecked = false;
  /** Set when the stream is not one this parser follows: everything passes unchanged. */
  private passThrough = false;
  /** The frames of a header block still missing its END_HEADERS, as received. */
  private block?: { stream: number; endStream: boolean; fragments: Uint8Array[]; frames: Uint8Array[] };

  push(chunk: Uint8Array): Uint8Array[] {
    if (this.passThrough) return [chunk];
    const bytes = this.pending.length === 0 ? chunk : concat([this.pending, chunk]);
    const out: Uint8Array[] = [];
    let at = 0;
    if (!this.prefaceChecked) {
      if (bytes.length < PREFACE.length) {
        if (!sameBytes(bytes, PREFACE.subarray(0, bytes.length))) return this.giveUp(bytes, out);
        this.pending = bytes;
        return out;
      }
      if (!sameBytes(bytes.subarray(0, PREFACE.length), PREFACE)) return this.giveUp(bytes, out);
      this.prefaceChecked = true;
      out.push(bytes.subarray(0, PREFACE.length));
      at = PREFACE.length;
    }
    while (at + 9 <= bytes.length) {
      const length = (bytes[at] << 16) | (bytes[at + 1] << 8) | bytes[at + 2];
      if (at + 9 + length > bytes.length) break;
      const frame = bytes.subarray(at, at + 9 + length);
      if (!this.frame(frame, out)) return this.giveUp(bytes.subarray(at), out);
      at += 9 + length;
    }
    this.pending = bytes.slice(at);
    return joinAdjacent(out);
  }

  /** Handles one whole frame; false if it cannot be followed. */
  private frame(frame: Uint8Array, out: Uint8Array[]): boolean {
    const type = frame[3];
    const flags = frame[4];
    const stream = ((frame[5] & 0x7f) << 24) | (frame[6] << 16) | (frame[7] << 8) | frame[8];
    if (type !== HEADERS && type !== CONTINUATION) {
      if (this.block) return false; // nothing may come between a block's frames
      out.push(frame);
      return true;
    }
    let payload = frame.subarray(9);
    if (type === HEADERS) {
      if (this.block) return false;
      let start = 0;
      let end = payload.length;
      if (flags & PADDED) {
        end -= payload[0];
        start = 1;
      }
      if (flags & PRIORITY) start += 5;
      if (start > end) return false;
      payload = payload.subarray(start, end);
      this.block = { stream, endStream: (flags & END_STREAM) !== 0, fragments: [], frames: [] };
    } else if (!this.block || this.block.stream !== stream) {
      return false;
    }
    this.block.fragments.push(payload);
    this.block.frames.push(frame);
    if (!(flags & END_HEADERS)) return true;

    const { endStream, fragments, frames } = this.block;
    this.block = undefined;
    const mended = mendHeaderBlock(concat(fragments));
    if (!mended) {
      out.push(...frames);
      return true;
    }
    for (let i = 0; i === 0 || i < mended.length; i += maxFramePayload) {
      const piece = mended.subarray(i, i + maxFramePayload);
      const last = i + maxFramePayload >= mended.length;
      const pieceFlags = (last ? END_HEADERS : 0) | (i === 0 && endStream ? END_STREAM : 0);
      out.push(frameHeader(piece.length, i === 0 ? HEADERS : CONTINUATION, pieceFlags, stream), piece);
    }
    return true;
  }

  private giveUp(rest: Uint8Array, out: Uint8Array[]): Uint8Array[] {
    this.passThrough = true;
    if (this.block) out.push(...this.block.frames);
    this.block = undefined;
    this.pending = new Uint8Array(0);
    if (rest.length > 0) out.push(rest);
    return out;
  }
}

/**
 * Pieces that lie side by side in one buffer become one piece: the frames that passed unchanged
 * go on as the chunk they came in, so Node's HTTP/2 parses a read in one call, not one per frame.
 */
function joinAdjacent(pieces: Uint8Array[]): Uint8Array[] {
  const out: Uint8Array[] = [];
  for (const piece of pieces) {
    const last = out[out.length - 1];
    if (last && last.buffer === piece.buffer && last.byteOffset + last.length === piece.byteOffset) {
      out[out.length - 1] = Buffer.from(last.buffer, last.byteOffset, last.length + piece.length);
    } else {
      out.push(piece);
    }
  }
  return out;
}

function concat(parts: Uint8Array[]): Uint8Array {
  if (parts.length === 1) return parts[0];
  return Buffer.concat(parts);
}
// #endregion frames

// #region connection
/**
 * The socket as gRPC should see it: what the client sends passes through an AuthorityMender,
 * what the server sends goes out unchanged. Backpressure both ways: the socket is paused while
 * the reader is full, and writes complete when the socket took them.
 */
export function mendingConnection(socket: Socket): Duplex {
  const mender = new AuthorityMender();
  const conn = new Duplex({
    read() {
      socket.resume();
    },
    write(chunk: Buffer, _encoding, callback) {
      socket.write(chunk, callback);
    },
    // Node's HTTP/2 hands over each batch of frames it has ready as several buffers at once
    // (corked). Passed on one by one they would cost one write(2) each — a unary call's answer
    // alone is three frames; corked, the socket sends the whole batch with one writev(2).
    writev(chunks, callback) {
      socket.cork();
      for (let i = 0; i < chunks.length - 1; i++) socket.write(chunks[i].chunk);
      socket.write(chunks[chunks.length - 1].chunk, callback);
      socket.uncork();
    },
    final(callback) {
      socket.end(callback);
    },
    destroy(err, callback) {
      socket.destroy(err ?? undefined);
      callback(err);
    },
  });
  socket.on("data", (chunk: Buffer) => {
    let room = true;
    for (const piece of mender.push(chunk)) room = conn.push(piece) && room;
    if (!room) socket.pause();
  });
  socket.on("end", () => conn.push(null));
  socket.on("error", (err) => conn.destroy(err));
  socket.on("close", () => conn.destroy());
  socket.setNoDelay(true);
  return conn;
}
// #endregion connection
