/**
 * WAL file names — `<seq>-<revision>.wal` for segments and `<seq>-<revision>.snap` for snapshots.
 *
 * Solves: recovery finds its files by name alone: the segments in order, and the snapshot that
 * pairs with the segment continuing after it. Both counters are written as 16 hex digits, as etcd
 * names its files, so the names sort in the order the files were made.
 *
 * Invariants:
 * - `parseDataFileName(dataFileName(s, r, x), x)` is `{ seq: s, revision: r }`; any other name
 *   parses as undefined.
 *
 * @upstream etcd-io/etcd server/wal/util.go (walName, parseWALName, isValidSeq)
 * @upstream etcd-io/etcd server/etcdserver/api/snap/snapshotter.go (snapshot names: %016x-%016x.snap)
 * @chapter 01-etcd-watch
 */

/** `<seq>-<revision><suffix>` in 16 hex digits each, as etcd names its files: they sort by name. */
export function dataFileName(seq: number, revision: number, suffix: string): string {
  return `${seq.toString(16).padStart(16, "0")}-${revision.toString(16).padStart(16, "0")}${suffix}`;
}

export function parseDataFileName(
  name: string,
  suffix: string,
): { seq: number; revision: number } | undefined {
  if (!name.endsWith(suffix)) return undefined;
  const match = /^([0-9a-f]{16})-([0-9a-f]{16})$/.exec(name.slice(0, -suffix.length));
  if (!match) return undefined;
  return { seq: Number.parseInt(match[1], 16), revision: Number.parseInt(match[2], 16) };
}

// #region segment-names
const WAL_SUFFIX = ".wal";

/** `<seq>-<revision>.wal`, e.g. `0000000000000002-00000000000004d2.wal`. */
export function walName(seq: number, revision: number): string {
  return dataFileName(seq, revision, WAL_SUFFIX);
}

export function parseWALName(name: string): { seq: number; revision: number } | undefined {
  return parseDataFileName(name, WAL_SUFFIX);
}
// #endregion segment-names
