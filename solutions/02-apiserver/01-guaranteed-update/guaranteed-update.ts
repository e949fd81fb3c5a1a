// The reference answer is the course's own code: Etcd3Store.guaranteedUpdate in
// code/apiserver/storage/etcd3-store.ts (region guaranteed-update), which every update of the
// API server goes through.
import type { KubeObject } from "../../../code/api/meta.ts";
import type { GroupResource } from "../../../code/apiserver/errors.ts";
import type { EtcdClient } from "../../../code/apiserver/storage/etcd-client.ts";
import { Etcd3Store } from "../../../code/apiserver/storage/etcd3-store.ts";
import type { Preconditions, UpdateFunc } from "../../../code/apiserver/storage/interfaces.ts";

export function guaranteedUpdate(
  client: EtcdClient,
  gr: GroupResource,
  key: string,
  opts: { preconditions?: Preconditions; ignoreNotFound?: boolean },
  tryUpdate: UpdateFunc,
): Promise<KubeObject> {
  return new Etcd3Store({ client, groupResource: gr }).guaranteedUpdate(key, opts, tryUpdate);
}
