/**
 * Exercise: `--prefix` — the range_end that selects every key starting with a prefix.
 *
 * etcd's API has no "prefix" request: a range is `key` plus `range_end`, and clients turn a prefix
 * into a range_end (etcd's clientv3 GetPrefixRangeEnd). The store reads the range with the course's
 * own keyRange (code/store/mvcc/index.ts): an empty range_end is one key, the single byte "\0" means
 * "every key ≥ key", anything else is [key, range_end). README.md has the rules.
 */

/** The range_end that, with `key = prefix`, selects exactly the keys that start with `prefix`. */
export function prefixEnd(prefix: Uint8Array): Uint8Array {
  throw new Error(
    `TODO: prefixEnd — the first key after every key that starts with [${[...prefix].join(", ")}]`,
  );
}
