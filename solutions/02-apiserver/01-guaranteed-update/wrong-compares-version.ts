// Mistake: the txn compares the key's version instead of its mod_revision — a delete and re-create between read and write brings the version back to 1, so the stale update overwrites the new object.
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
  let state = stateFrom(gr, key, await client.range({ key: bytes(key) }), opts.ignoreNotFound ?? false);
  for (;;) {
    const preconditionError = checkPreconditions(gr, key, state.obj, opts.preconditions);
    if (preconditionError) throw preconditionError;
    const updated = await tryUpdate(state.obj ? structuredClone(state.obj) : undefined);
    const data = encodeObject(updated);
    if (state.obj && data === state.data) return state.obj;
    const resp = await client.txn({
      // The mistake: "unchanged since I read it" judged by the version (writes since creation).
      compare: [{ key: bytes(key), target: "VERSION", result: "EQUAL", version: state.version }],
      success: [{ requestPut: { key: bytes(key), value: bytes(data) } }],
      failure: [{ requestRange: { key: bytes(key) } }],
    });
    if (resp.succeeded) return decodeObject(data, resp.header.revision);
    state = stateFrom(gr, key, resp.responses[0]?.responseRange, opts.ignoreNotFound ?? false);
  }
}
