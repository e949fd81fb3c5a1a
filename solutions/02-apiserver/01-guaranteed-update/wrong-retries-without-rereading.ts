// Mistake: on a lost race it retries the write with the same stale mod_revision, without reading the object again — the compare can never hold again, and the loop never ends.
import type { KubeObject } from "../../../code/api/meta.ts";
import { type GroupResource, newNotFound } from "../../../code/apiserver/errors.ts";
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
  for (;;) {
    // The mistake: "try again" means sending the same txn again — with the revision read before the race.
    const resp = await client.txn({
      compare: [{ key: bytes(key), target: "MOD", result: "EQUAL", modRevision: state.rev }],
      success: [{ requestPut: { key: bytes(key), value: bytes(data) } }],
      failure: [],
    });
    if (resp.succeeded) return decodeObject(data, resp.header.revision);
  }
}
