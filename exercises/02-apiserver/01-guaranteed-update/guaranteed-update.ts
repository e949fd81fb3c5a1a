/**
 * Exercise: guaranteedUpdate — optimistic concurrency over etcd.
 *
 * Read the object and the `mod_revision` of its key, let the caller compute the new object
 * (tryUpdate), and write it with a txn that succeeds only if the key's `mod_revision` is still
 * the one read. A lost race is not an error: read again and run tryUpdate again. README.md has
 * the rules.
 *
 * Helpers you may import:
 * - `encodeObject(obj)` / `decodeObject(value, rev)` from code/apiserver/storage/etcd3-store.ts:
 *   the object as stored (JSON without resourceVersion), and back with resourceVersion = rev;
 * - `checkPreconditions(gr, key, obj, preconditions)` and `nameOfKey(key)` from
 *   code/apiserver/storage/errors.ts: the 409 Conflict to throw, or undefined;
 * - `newNotFound(gr, name)` from code/apiserver/errors.ts.
 * The client's calls (`client.range`, `client.txn`) take and return etcd's messages
 * (code/store/etcdserverpb/rpc.ts); keys and values are bytes (`new TextEncoder().encode(key)`).
 */
import type { KubeObject } from "../../../code/api/meta.ts";
import type { GroupResource } from "../../../code/apiserver/errors.ts";
import type { EtcdClient } from "../../../code/apiserver/storage/etcd-client.ts";
import type { Preconditions, UpdateFunc } from "../../../code/apiserver/storage/interfaces.ts";

const qualifiedName = (gr: GroupResource, key: string) => `${gr.resource} ${key}`;

/**
 * Updates the object at `key`: tryUpdate gets the current object (a copy it may change) and
 * returns the object to write. Returns the object as written, with its new resourceVersion —
 * or the stored object, unchanged, if tryUpdate changed nothing.
 */
export async function guaranteedUpdate(
  client: EtcdClient,
  gr: GroupResource,
  key: string,
  opts: { preconditions?: Preconditions; ignoreNotFound?: boolean },
  tryUpdate: UpdateFunc,
): Promise<KubeObject> {
  throw new Error(
    `TODO: guaranteedUpdate — read ${qualifiedName(gr, key)} with ${client.constructor.name}, check ${Object.keys(opts.preconditions ?? {}).length} precondition(s), call ${tryUpdate.name || "tryUpdate"}, write only if its mod_revision is unchanged, retry on a lost race`,
  );
}
