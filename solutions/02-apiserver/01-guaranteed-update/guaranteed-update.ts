// The reference answer, written out in the steps README.md names. The API server's own updates go
// through the same loop in the course's code: Etcd3Store.guaranteedUpdate in
// code/apiserver/storage/etcd3-store.ts (region guaranteed-update).
//
// Each decision the loop makes is one named step in `reference`; `guaranteedUpdateWith` puts the
// steps together. A recorded mistake next to this file (wrong-*.ts) is this answer with one step
// done wrong: it builds its guaranteedUpdate with `guaranteedUpdateWith({ ...reference, <step> })`.
import type { KubeObject } from "../../../code/api/meta.ts";
import { type GroupResource, newNotFound } from "../../../code/apiserver/errors.ts";
import { checkPreconditions, nameOfKey } from "../../../code/apiserver/storage/errors.ts";
import type { EtcdClient } from "../../../code/apiserver/storage/etcd-client.ts";
import { decodeObject, encodeObject } from "../../../code/apiserver/storage/etcd3-store.ts";
import type { Preconditions, UpdateFunc } from "../../../code/apiserver/storage/interfaces.ts";
import type { Compare, RangeResponse, TxnResponse } from "../../../code/store/etcdserverpb/rpc.ts";

export const bytes = (s: string) => new TextEncoder().encode(s);

/** The update in hand: which key, of which resource, and whether a missing object is an error. */
export interface Target {
  gr: GroupResource;
  key: string;
  ignoreNotFound: boolean;
}

/** The key as read: the object, its mod_revision and version (0 when absent), the stored bytes. */
export interface ObjState {
  obj?: KubeObject;
  rev: number;
  version: number;
  data?: string;
}

/** The state a range response shows — NotFound for a missing key unless `ignoreNotFound`. */
export function stateFrom(t: Target, resp: RangeResponse | undefined): ObjState {
  const kv = resp?.kvs[0];
  if (!kv) {
    if (!t.ignoreNotFound) throw newNotFound(t.gr, nameOfKey(t.key));
    return { rev: 0, version: 0 };
  }
  const data = new TextDecoder().decode(kv.value);
  return { obj: decodeObject(data, kv.modRevision), rev: kv.modRevision, version: kv.version, data };
}

export interface GuaranteedUpdateSteps {
  /** Whether the preconditions are checked before try number `attempt` (0 is the first). */
  checksPreconditions(attempt: number): boolean;
  /** Whether `data` needs no write at all. */
  unchanged(state: ObjState, data: string): boolean;
  /** The txn's compare: "the key is still as I read it". */
  stillAsRead(t: Target, state: ObjState): Compare;
  /** After a lost race: the state to try again from. */
  afterLostRace(t: Target, resp: TxnResponse, state: ObjState): ObjState;
}

export const reference: GuaranteedUpdateSteps = {
  // Every try: after a lost race the object may be another one (deleted and re-created, new uid).
  checksPreconditions: () => true,

  // A no-op update writes nothing: no new resourceVersion, no watch event.
  unchanged: (state, data) => data === state.data,

  // mod_revision changes on every write, and a re-created key never gets an old one back
  // (0 for "still does not exist").
  stillAsRead: (t, state) => ({ key: bytes(t.key), target: "MOD", result: "EQUAL", modRevision: state.rev }),

  // The failure branch read the key in the same txn: the object as it is now, no extra round trip.
  afterLostRace: (t, resp) => stateFrom(t, resp.responses[0]?.responseRange),
};

/** The exercise's function, made of `step`. */
export function guaranteedUpdateWith(step: GuaranteedUpdateSteps) {
  return async function guaranteedUpdate(
    client: EtcdClient,
    gr: GroupResource,
    key: string,
    opts: { preconditions?: Preconditions; ignoreNotFound?: boolean },
    tryUpdate: UpdateFunc,
  ): Promise<KubeObject> {
    const t: Target = { gr, key, ignoreNotFound: opts.ignoreNotFound ?? false };
    let state = stateFrom(t, await client.range({ key: bytes(key) }));
    for (let attempt = 0; ; attempt++) {
      if (step.checksPreconditions(attempt)) {
        const preconditionError = checkPreconditions(gr, key, state.obj, opts.preconditions);
        if (preconditionError) throw preconditionError;
      }
      const updated = await tryUpdate(state.obj ? structuredClone(state.obj) : undefined);
      const data = encodeObject(updated);
      if (state.obj && step.unchanged(state, data)) return state.obj;
      const resp = await client.txn({
        compare: [step.stillAsRead(t, state)],
        success: [{ requestPut: { key: bytes(key), value: bytes(data) } }],
        failure: [{ requestRange: { key: bytes(key) } }],
      });
      if (resp.succeeded) return decodeObject(data, resp.header.revision);
      state = step.afterLostRace(t, resp, state);
    }
  };
}

export const guaranteedUpdate = guaranteedUpdateWith(reference);
