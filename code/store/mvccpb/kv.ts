/**
 * KV types — what the store hands out: key-value pairs and change events.
 *
 * Solves: every layer (index, store, watch, the etcd API) must agree on one shape for "a key at a
 * revision" and "a change". They are etcd's protobuf messages `mvccpb.KeyValue` and
 * `mvccpb.Event`, with field names in camelCase so the gRPC layer maps them one to one.
 *
 * Invariants:
 * - a live key has `createRevision` > 0, `modRevision` ≥ `createRevision` and `version` ≥ 1;
 * - a DELETE event's `kv` carries only `key` and `modRevision` (the deletion's revision): a
 *   tombstone stores no value, creation, version or lease;
 * - values handed out are never mutated by the store afterwards; callers must not mutate them.
 *
 * @upstream etcd-io/etcd api/mvccpb/kv.proto (KeyValue, Event)
 * @chapter 01-etcd-watch
 */

// #region key-value
export interface KeyValue {
  readonly key: Uint8Array;
  /** The revision of the last creation of this key (reset by delete + put). */
  readonly createRevision: number;
  /** The revision of the last change of this key. */
  readonly modRevision: number;
  /** Changes since the last creation: 1 on creation, +1 on each put. */
  readonly version: number;
  readonly value: Uint8Array;
  /** The lease the key is attached to; 0 for none. */
  readonly lease: number;
}

export type EventType = "PUT" | "DELETE";

export interface Event {
  readonly type: EventType;
  readonly kv: KeyValue;
  /** The key before this change; only when the watcher asked for prev_kv. */
  readonly prevKv?: KeyValue;
}
// #endregion key-value

const empty = new Uint8Array(0);

/** The record of a deletion: the key, nothing else (etcd marshals `KeyValue{Key: key}`). */
export function tombstoneKeyValue(key: Uint8Array, modRevision = 0): KeyValue {
  return { key, createRevision: 0, modRevision, version: 0, value: empty, lease: 0 };
}

/** The zero KeyValue: what a compare on a missing key compares against. */
export const zeroKeyValue: KeyValue = Object.freeze(tombstoneKeyValue(empty));
