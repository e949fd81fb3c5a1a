// The reference answer is the course's own code: encodeContinue and decodeContinue in
// code/apiserver/storage/continue.ts, and Etcd3Store.getList in
// code/apiserver/storage/etcd3-store.ts (regions get-list and list-revision), which serves every
// paged list of the API server.
import type { EtcdClient } from "../../../code/apiserver/storage/etcd-client.ts";
import { Etcd3Store } from "../../../code/apiserver/storage/etcd3-store.ts";
import type { ListResult } from "../../../code/apiserver/storage/interfaces.ts";
import { everything } from "../../../code/apiserver/storage/selection-predicate.ts";

export {
  decodeContinue,
  ErrEmptyStartKey,
  ErrGenericInvalidKey,
  ErrInvalidStartRV,
  ErrUnrecognizedEncodedVersion,
  encodeContinue,
} from "../../../code/apiserver/storage/continue.ts";

export function listPage(
  client: EtcdClient,
  keyPrefix: string,
  opts: { limit: number; continue?: string },
): Promise<ListResult> {
  const store = new Etcd3Store({ client, groupResource: { group: "", resource: "" } });
  return store.getList(keyPrefix, {
    predicate: everything,
    recursive: true,
    limit: opts.limit,
    continue: opts.continue,
  });
}
