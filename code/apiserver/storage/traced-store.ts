/**
 * TracedEtcd3Store — the etcd3 store's writes as spans: `Create etcd3` and `GuaranteedUpdate
 * etcd3`, children of the request's handler span, carrying the key, the resource and (for a pod)
 * its uid, name and namespace. Upstream starts these spans inside etcd3's store.go itself.
 *
 * Solves: a pod's trace shows how long its storage write took inside the request, and which
 * write it was (the create, the binding's update of spec.nodeName, a status update) — the
 * one step of a request that goes to etcd.
 *
 * Invariants: with no traced request active (tracing off, or a write the server makes itself
 * outside any request) the store is called exactly as the plain one.
 *
 * What upstream does differently: its spans also carry events for each step inside the write
 * ("About to Encode", "TransformToStorage succeeded", "Txn call succeeded", "decode
 * succeeded"); ours records the ones around the etcd transaction only, keeping the store's own
 * code free of tracing.
 *
 * @upstream kubernetes/kubernetes staging/src/k8s.io/apiserver/pkg/storage/etcd3/store.go (Create, GuaranteedUpdate: their tracing.Start spans)
 * @chapter 08-cluster
 */
import type { KubeObject } from "../../api/meta.ts";
import { podAttributes, withSpan } from "../../tracing/tracing.ts";
import { Etcd3Store, type Etcd3StoreOptions } from "./etcd3-store.ts";
import type { GuaranteedUpdateOptions, UpdateFunc } from "./interfaces.ts";

export class TracedEtcd3Store extends Etcd3Store {
  private readonly resource: string;

  constructor(opts: Etcd3StoreOptions) {
    super(opts);
    this.resource = opts.groupResource.resource;
  }

  private attributes(key: string, obj?: KubeObject) {
    return {
      key,
      resource: this.resource,
      ...(this.resource === "pods" && obj ? podAttributes(obj) : {}),
    };
  }

  override create(key: string, obj: KubeObject): Promise<KubeObject> {
    return withSpan(
      "Create etcd3",
      () => this.attributes(key, obj),
      async (span) => {
        const created = await super.create(key, obj);
        span?.addEvent("Txn call succeeded", { revision: created.metadata.resourceVersion ?? "" });
        return created;
      },
    );
  }

  override guaranteedUpdate(
    key: string,
    opts: GuaranteedUpdateOptions,
    tryUpdate: UpdateFunc,
  ): Promise<KubeObject> {
    return withSpan(
      "GuaranteedUpdate etcd3",
      () => this.attributes(key),
      async (span) => {
        const updated = await super.guaranteedUpdate(key, opts, tryUpdate);
        if (span) {
          if (this.resource === "pods") span.setAttributes(podAttributes(updated));
          span.addEvent("Transaction committed", { revision: updated.metadata.resourceVersion ?? "" });
        }
        return updated;
      },
    );
  }
}
