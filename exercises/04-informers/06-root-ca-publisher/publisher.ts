/**
 * Exercise: the root CA publisher — a controller from scratch on the course's informer and
 * workqueue. Every Active namespace must have a ConfigMap `kube-root-ca.crt` whose data is exactly
 * `{ "ca.crt": rootCA }` and whose annotation `kubernetes.io/description` is `Description`.
 *
 * Make the informers and the queue in the constructor (the test starts the factory after it, as
 * the controller-manager does); `run` waits for the caches, then runs `workers` workers until
 * `signal` aborts. README.md has the rules.
 */
import type { Clientset } from "../../../code/client/kubernetes/clientset.ts";
import type { SharedInformerFactory } from "../../../code/client/tools/cache/informer-factory.ts";

export const RootCACertConfigMapName = "kube-root-ca.crt";
export const DescriptionAnnotation = "kubernetes.io/description";
export const Description =
  "Contains a CA bundle that can be used to verify the kube-apiserver when using internal endpoints such as the internal service IP or kubernetes.default.svc. " +
  "No other usage is guaranteed across distributions of Kubernetes clusters.";

export const namespacesResource = { group: "", version: "v1", resource: "namespaces" };
export const configMapsResource = { group: "", version: "v1", resource: "configmaps" };

export class Publisher {
  constructor(
    readonly client: Clientset,
    readonly factory: SharedInformerFactory,
    readonly rootCA: string,
  ) {
    // TODO: the queue; the handlers on factory.informerFor(...); the listers.
  }

  async run(workers: number, signal: AbortSignal): Promise<void> {
    throw new Error(`TODO: Publisher.run(${workers} workers, aborted: ${signal.aborted})`);
  }
}
