/**
 * The RBAC index's feed — list, then watch, each of the four RBAC resources from the API
 * server's own registry stores, and apply every event to the index. Upstream the RBAC
 * authorizer reads shared informers (client-go's reflector over the loopback client); the
 * course builds informers in chapter 4, so this is the reflector's loop in its smallest form,
 * reading the stores directly.
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
import type { Watch } from "../../storage/interfaces.ts";
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
  let stopped = false;
  const watches = new Set<Watch>();
  const synced = resources.map(
    (resource) =>
      new Promise<void>((resolve, reject) => {
        const store = stores.get(`rbac.authorization.k8s.io/${resource}`) as Store;
        void (async () => {
          let first = true;
          while (!stopped) {
            try {
              const list = await store.list("", {});
              index.replace(resource, list.items);
              if (first) resolve();
              first = false;
              const w = await store.watch("", { resourceVersion: list.resourceVersion });
              watches.add(w);
              for await (const ev of w) {
                if (ev.type === "ERROR") break; // relist
                if (ev.type === "BOOKMARK") continue;
                index.apply(resource, ev.type, ev.object);
                onEvent(resource, ev.type, ev.object);
              }
              watches.delete(w);
            } catch (e) {
              if (first) return reject(e);
              if (!stopped) await new Promise((r) => setTimeout(r, 100));
            }
          }
        })();
      }),
  );
  return {
    synced: Promise.all(synced).then(() => {}),
    stop() {
      stopped = true;
      for (const w of watches) w.stop();
    },
  };
}
// #endregion list-and-watch
