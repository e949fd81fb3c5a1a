// Mistake: the Deployment is made without an ownerReference to its ConfigMap. Everything works
// until the WebApp is deleted: nothing ties the Deployment to it, so the garbage collector leaves
// it (and its pods) running forever. (The syncHandler's "not managed by WebApp" check below is then
// skipped too, since there is no owner to compare.)
import type { Deployment } from "../../../code/api/apps.ts";
import type { ConfigMap } from "../../../code/api/core.ts";
import type { Clientset } from "../../../code/client/kubernetes/clientset.ts";
import { DeletedFinalStateUnknown } from "../../../code/client/tools/cache/delta-fifo.ts";
import type { Lister } from "../../../code/client/tools/cache/listers.ts";
import type { ResourceEventHandler } from "../../../code/client/tools/cache/shared-informer.ts";
import { splitMetaNamespaceKey } from "../../../code/client/tools/cache/store.ts";

export const kindLabel = "course.dev/kind";
export const kindWebApp = "WebApp";

export interface WebAppContext {
  client: Clientset;
  configMaps: Lister<ConfigMap>;
  deployments: Lister<Deployment>;
}

const isWebApp = (cm: ConfigMap | undefined) => cm?.metadata.labels?.[kindLabel] === kindWebApp;

export function eventHandlers(
  enqueue: (obj: ConfigMap | DeletedFinalStateUnknown<ConfigMap>) => void,
): ResourceEventHandler<ConfigMap> {
  return {
    onAdd: (cm) => {
      if (isWebApp(cm)) enqueue(cm);
    },
    // Every update, not only the ones we think matter: a resync or a label added makes a WebApp too.
    onUpdate: (_old, cm) => {
      if (isWebApp(cm)) enqueue(cm);
    },
    // Nothing to delete ourselves (the garbage collector follows the ownerReference), but a
    // controller that keeps state per key would forget it here.
    onDelete: (obj) => {
      const cm = obj instanceof DeletedFinalStateUnknown ? obj.obj : obj;
      if (isWebApp(cm)) enqueue(obj);
    },
  };
}

/** The Deployment a WebApp asks for (newDeployment in sample-controller). */
function newDeployment(cm: ConfigMap): Deployment {
  const name = cm.metadata.name ?? "";
  const labels = { "course.dev/webapp": name };
  return {
    apiVersion: "apps/v1",
    kind: "Deployment",
    metadata: {
      name,
      namespace: cm.metadata.namespace,
      labels,
    },
    spec: {
      replicas: replicasOf(cm),
      selector: { matchLabels: labels },
      template: {
        metadata: { labels },
        spec: { containers: [{ name: "web", image: cm.data?.image ?? "course/web" }] },
      },
    },
  };
}

const replicasOf = (cm: ConfigMap) => Number(cm.data?.replicas ?? "1");

export async function syncHandler(key: string, ctx: WebAppContext): Promise<void> {
  const { namespace, name } = splitMetaNamespaceKey(key);
  const cm = ctx.configMaps.byNamespace(namespace).get(name);
  // Gone (the garbage collector removes its Deployment), or no (longer a) WebApp: nothing to do.
  if (!cm || !isWebApp(cm)) return;
  const want = newDeployment(cm);
  const have = ctx.deployments.byNamespace(namespace).get(name);
  if (!have) {
    await ctx.client.appsV1.deployments(namespace).create(want);
    return;
  }
  // Someone else's Deployment of the same name: say so, do not take it over (sample-controller's
  // MessageResourceExists).
  const owner = have.metadata.ownerReferences?.find((r) => r.controller);
  if (owner && owner.uid !== cm.metadata.uid) {
    throw new Error(`Resource "${name}" already exists and is not managed by WebApp`);
  }
  const image = want.spec.template.spec?.containers[0].image;
  if (have.spec.replicas === want.spec.replicas && have.spec.template.spec?.containers[0]?.image === image)
    return;
  // Update from the cached object: its resourceVersion makes a concurrent change a Conflict,
  // which throws, and the key is retried with the fresh object.
  const updated: Deployment = structuredClone(have);
  updated.spec.replicas = want.spec.replicas;
  const container = updated.spec.template.spec?.containers[0];
  if (container) container.image = image;
  await ctx.client.appsV1.deployments(namespace).update(updated);
}
