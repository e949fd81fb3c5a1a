// Mistake: edge-triggered — it acts on the namespace's arrival only and never listens to the
// ConfigMaps. Plausible: "a new namespace gets its ConfigMap" is the whole requirement as first
// stated. But `kubectl delete configmap kube-root-ca.crt` or an edit is an event on a ConfigMap;
// nothing enqueues the namespace, so the ConfigMap stays gone (or wrong) until the namespace
// happens to change. Upstream listens to updates and deletions of kube-root-ca.crt too.
import type { KubeObject } from "../../../code/api/meta.ts";
import type { DeletedFinalStateUnknown } from "../../../code/client/tools/cache/delta-fifo.ts";
import { Publisher as Correct } from "./publisher.ts";

export * from "./publisher.ts";

export class Publisher extends Correct {
  protected override configMapChanged(_obj: KubeObject | DeletedFinalStateUnknown<KubeObject>): void {}
}
