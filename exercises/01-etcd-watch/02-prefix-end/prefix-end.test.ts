import { describe, expect, it } from "vitest";
import { KVStore } from "../../../code/store/mvcc/kvstore.ts";
import { WatchableStore } from "../../../code/store/mvcc/watchable-store.ts";
import { bytesEqual, compareBytes } from "../../../code/store/pkg/bytes.ts";
import { prefixEnd } from "./prefix-end.ts";

/** Keys as bytes: "a\xff" is the two bytes 0x61 0xff (latin1, one byte per character). */
const k = (s: string) => new Uint8Array(Buffer.from(s, "latin1"));
const byteText = (c: number) =>
  c >= 0x20 && c < 0x7f ? String.fromCharCode(c) : `\\x${c.toString(16).padStart(2, "0")}`;
/** Bytes as text, those outside printable ASCII escaped: a\xff. */
const escaped = (bytes: Uint8Array) => [...bytes].map(byteText).join("");
/** The same, quoted: "a\xff". */
const show = (bytes: Uint8Array) => `"${escaped(bytes)}"`;

function ok<T>(x: T): Exclude<T, Error> {
  if (x instanceof Error) throw x;
  return x as Exclude<T, Error>;
}

function startsWith(key: Uint8Array, prefix: Uint8Array): boolean {
  return key.length >= prefix.length && bytesEqual(key.subarray(0, prefix.length), prefix);
}

/** Keys chosen to sit right at the edges: after a prefix, and around the 0xff bytes. */
const keys = [
  "a",
  "a/1",
  "a/2",
  "a0",
  "a\xfe",
  "a\xff",
  "a\xff\x00",
  "a\xff\xff",
  "a\xff\xff\xff",
  "b",
  "b\x00",
  "\xfe\xff",
  "\xff",
  "\xff\x00",
  "\xff\xfe",
  "\xff\xff",
  "\xff\xff\x01",
].map(k);
const prefixes = ["a", "a/", "a\xff", "a\xff\xff", "b", "\xfe", "\xff", "\xff\xff", "\xff\xff\xff"].map(k);

function storeWithKeys(): KVStore {
  const store = new KVStore();
  for (const key of keys) ok(store.put(key, key));
  return store;
}

describe("prefixEnd: the bytes", () => {
  /** it.each rows, named by their escaped bytes ($name, $want). */
  const rows = (pairs: [string, string][]) =>
    pairs.map(([prefix, end]) => ({ name: escaped(k(prefix)), prefix: k(prefix), want: escaped(k(end)) }));

  it.each(
    rows([
      ["a", "b"],
      ["/registry/pods/", "/registry/pods0"],
      ["a\xfe", "a\xff"],
      ["foo\x00", "foo\x01"],
    ]),
  )("the end of $name is $want: its last byte plus one", ({ prefix, want }) => {
    expect(escaped(prefixEnd(prefix))).toBe(want);
  });

  it.each(
    rows([
      ["a\xff", "b"],
      ["a\xff\xff", "b"],
      ["ab\xff\xff\xff", "ac"],
      ["\x00\xff", "\x01"],
    ]),
  )(
    "the end of $name is $want: trailing 0xff bytes carry into the byte before them, and are dropped",
    ({ prefix, want }) => {
      expect(escaped(prefixEnd(prefix))).toBe(want);
    },
  );

  it.each(
    rows([
      ["\xff", "\x00"],
      ["\xff\xff", "\x00"],
      ["\xff\xff\xff\xff", "\x00"],
      ["", "\x00"],
    ]),
  )(
    "$name has no byte below 0xff, so no end: the answer is $want, every key from the prefix on",
    ({ prefix, want }) => {
      expect(escaped(prefixEnd(prefix))).toBe(want);
    },
  );

  it("leaves the prefix it was given untouched", () => {
    const prefix = k("a\xff");
    const end = prefixEnd(prefix);
    expect(show(prefix)).toBe(show(k("a\xff")));
    end[0] = 0x7a;
    expect(show(prefix)).toBe(show(k("a\xff")));
  });
});

describe("prefixEnd in the real store: range, delete and watch by prefix", () => {
  it.each(prefixes.map((p) => [show(p), p] as const))(
    "a range over prefix %s returns exactly the keys that start with it",
    (_name, prefix) => {
      const store = storeWithKeys();
      const got = ok(store.range(prefix, prefixEnd(prefix))).kvs.map((kv) => show(kv.key));
      const want = keys.filter((key) => startsWith(key, prefix)).map(show);
      expect(got).toEqual(want);
    },
  );

  it("an empty prefix lists every key", () => {
    const store = storeWithKeys();
    const empty = new Uint8Array(0);
    const got = ok(store.range(empty, prefixEnd(empty))).kvs.map((kv) => show(kv.key));
    expect(got).toEqual([...keys].sort(compareBytes).map(show));
  });

  it("a delete by prefix deletes those keys and no other (etcdctl del --prefix)", () => {
    const store = storeWithKeys();
    const prefix = k("a\xff");
    const deleted = ok(store.deleteRange(prefix, prefixEnd(prefix))).deleted;
    const left = ok(store.range(k("\x00"), k("\x00"))).kvs.map((kv) => show(kv.key));
    expect(deleted).toBe(4);
    expect(left).toEqual(keys.filter((key) => !startsWith(key, prefix)).map(show));
  });

  it("a watch on a prefix hears every change under it, and nothing else", () => {
    const store = new WatchableStore();
    const stream = store.newWatchStream();
    const prefix = k("\xff");
    ok(stream.watch({ key: prefix, rangeEnd: prefixEnd(prefix) }));
    for (const key of keys) ok(store.put(key, key));
    const heard = stream
      .drain()
      .flatMap((r) => r.events)
      .map((ev) => show(ev.kv.key));
    expect(heard).toEqual(keys.filter((key) => startsWith(key, prefix)).map(show));
    store.close();
  });
});
