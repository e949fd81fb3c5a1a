/**
 * The RBAC index's feed — list, then watch, each of the four RBAC resources from the API
 * server's own registry stores, and apply every event to the index. Upstream the RBAC
 * authorizer reads shared informers (client-go's reflector over the loopback client); the
 * course builds informers in chapter 4, so this feeds the index from the API server's smallest
 * informer (registry/store-informer.ts), reading the stores directly.
 *
 * Solves: the authorizer must see a new RoleBinding without reading storage on every request;
 * a watch delivers each change once, in order, right after it is written.
 *
 * Invariants:
 * - `synced` resolves once each resource has been listed into the index (upstream's
 *   HasSynced): the server does not answer requests before, or RBAC would deny everything;
 * - a watch that ends (an ERROR event, a compacted revision, a closed cache) is followed by a
 *   relist that replaces the resource's contents, so no change is lost for good;
 * - decisions are eventually consistent with writes, as upstream's: a request sent right after
 *   a binding is created may still be judged without it.
 *
 * @upstream kubernetes/kubernetes staging/src/k8s.io/client-go/tools/cache/reflector.go (ListAndWatch)
 * @upstream kubernetes/kubernetes pkg/kubeapiserver/authorizer/config.go (the RBAC authorizer over informer listers)
 * @chapter 03-api-security
 */
import type { KubeObject } from "../../../api/meta.ts";
import type { Store } from "../../registry/store.ts";
import { StoreInformer } from "../../registry/store-informer.ts";
import type { RBACIndex, RBACResource } from "./index.ts";

export interface RBACInformers {
  synced: Promise<void>;
  stop(): void;
}

const resources: RBACResource[] = ["roles", "clusterroles", "rolebindings", "clusterrolebindings"];

// #region list-and-watch
export function runRBACInformers(
  stores: Map<string, Store>,
  index: RBACIndex,
  onEvent: (resource: RBACResource, type: string, obj: KubeObject) => void = () => {},
): RBACInformers {
  const informers = resources.map((resource) => {
    const feed = (type: string) => (obj: KubeObject) => {
      index.apply(resource, type, obj);
      onEvent(resource, type, obj);
    };
    const informer = new StoreInformer(stores.get(`rbac.authorization.k8s.io/${resource}`) as Store, {
      add: feed("ADDED"),
      update: (_old, obj) => feed("MODIFIED")(obj),
      delete: feed("DELETED"),
    });
    void informer.run();
    return informer;
  });
  return {
    synced: Promise.all(informers.map((i) => i.synced)).then(() => {}),
    stop() {
      for (const i of informers) i.stop();
    },
  };
}
// #endregion list-and-watch
