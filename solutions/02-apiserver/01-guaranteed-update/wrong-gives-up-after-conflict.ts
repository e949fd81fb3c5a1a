// Mistake: a lost race is reported to the caller as 409 Conflict instead of retried — the storage's own race (another request between this server's read and write) becomes the client's problem.
import type { KubeObject } from "../../../code/api/meta.ts";
import {
  type GroupResource,
  newConflict,
  newNotFound,
  optimisticLockErrorMsg,
} from "../../../code/apiserver/errors.ts";
import { checkPreconditions, nameOfKey } from "../../../code/apiserver/storage/errors.ts";
import type { EtcdClient } from "../../../code/apiserver/storage/etcd-client.ts";
import { decodeObject, encodeObject } from "../../../code/apiserver/storage/etcd3-store.ts";
import type { Preconditions, UpdateFunc } from "../../../code/apiserver/storage/interfaces.ts";
import type { RangeResponse } from "../../../code/store/rpc.ts";

const bytes = (s: string) => new TextEncoder().encode(s);

interface State {
  obj?: KubeObject;
  rev: number;
  version: number;
  data?: string;
}

function stateFrom(
  gr: GroupResource,
  key: string,
  resp: RangeResponse | undefined,
  ignoreNotFound: boolean,
): State {
  const kv = resp?.kvs[0];
  if (!kv) {
    if (!ignoreNotFound) throw newNotFound(gr, nameOfKey(key));
    return { rev: 0, version: 0 };
  }
  const data = new TextDecoder().decode(kv.value);
  return { obj: decodeObject(data, kv.modRevision), rev: kv.modRevision, version: kv.version, data };
}

export async function guaranteedUpdate(
  client: EtcdClient,
  gr: GroupResource,
  key: string,
  opts: { preconditions?: Preconditions; ignoreNotFound?: boolean },
  tryUpdate: UpdateFunc,
): Promise<KubeObject> {
  const state = stateFrom(gr, key, await client.range({ key: bytes(key) }), opts.ignoreNotFound ?? false);
  const preconditionError = checkPreconditions(gr, key, state.obj, opts.preconditions);
  if (preconditionError) throw preconditionError;
  const updated = await tryUpdate(state.obj ? structuredClone(state.obj) : undefined);
  const data = encodeObject(updated);
  if (state.obj && data === state.data) return state.obj;
  const resp = await client.txn({
    compare: [{ key: bytes(key), target: "MOD", result: "EQUAL", modRevision: state.rev }],
    success: [{ requestPut: { key: bytes(key), value: bytes(data) } }],
    failure: [],
  });
  if (resp.succeeded) return decodeObject(data, resp.header.revision);
  // The mistake: give up after one conflict.
  throw newConflict(gr, nameOfKey(key), optimisticLockErrorMsg);
}
