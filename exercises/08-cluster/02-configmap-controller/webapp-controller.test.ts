// Exercise 8.2: your handlers and reconcile function run as a real controller — chapter 4's
// informers and rate-limited workqueue, wired below as kubernetes/sample-controller wires them —
// in this test process, against the grader's live cluster. Each test has a namespace of its own,
// and the controller watches only that namespace.
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { Deployment } from "../../../code/api/apps.ts";
import type { ConfigMap } from "../../../code/api/core.ts";
import { isNotFound } from "../../../code/client/errors.ts";
import { newSharedInformerFactory } from "../../../code/client/informers/factory.ts";
import { deletionHandlingMetaNamespaceKeyFunc } from "../../../code/client/tools/cache/delta-fifo.ts";
import { waitForCacheSync } from "../../../code/client/tools/cache/informer-factory.ts";
import type { Lister } from "../../../code/client/tools/cache/listers.ts";
import { defaultControllerRateLimiter } from "../../../code/client/util/workqueue/rate-limiters.ts";
import { newTypedRateLimitingQueueWithConfig } from "../../../code/client/util/workqueue/rate-limiting-queue.ts";
import { runWorkers } from "../../../code/client/util/workqueue/worker.ts";
import { eventually, useGraderCluster } from "../../../code/cmd/testing/grader-cluster.ts";
import { eventHandlers, kindLabel, kindWebApp, syncHandler } from "./webapp-controller.ts";

const configMapsResource = { group: "", version: "v1", resource: "configmaps" };
const deploymentsResource = { group: "apps", version: "v1", resource: "deployments" };

const cluster = useGraderCluster("configmap-controller");

/** The controller under test, and every error its reconcile function threw. */
let controller: { stop: () => Promise<void>; errors: string[] } | undefined;

// kubernetes/sample-controller controller.go (NewController, Run, runWorker), with your handlers
// and your syncHandler.
async function startController(namespace: string) {
  const abort = new AbortController();
  const factory = newSharedInformerFactory(cluster.admin, 0, { namespace });
  const configMaps = factory.informerFor(configMapsResource);
  const deployments = factory.informerFor(deploymentsResource);
  const queue = newTypedRateLimitingQueueWithConfig<string>(defaultControllerRateLimiter(), {
    name: "WebApps",
  });
  const enqueue = (obj: unknown) => queue.add(deletionHandlingMetaNamespaceKeyFunc(obj));
  const cmReg = configMaps.addEventHandler(eventHandlers(enqueue) as never);
  // sample-controller also watches the Deployments (handleObject) to undo a hand-made change;
  // these tests change only the ConfigMaps, so the Deployment informer serves your reads only.
  const depReg = deployments.addEventHandler({});
  factory.start(abort.signal);
  await waitForCacheSync(
    abort.signal,
    () => cmReg.hasSynced(),
    () => depReg.hasSynced(),
  );
  const errors: string[] = [];
  const ctx = {
    client: cluster.admin,
    configMaps: factory.lister(configMapsResource) as unknown as Lister<ConfigMap>,
    deployments: factory.lister(deploymentsResource) as unknown as Lister<Deployment>,
  };
  const workers = runWorkers(queue, 1, (key) => syncHandler(key, ctx), abort.signal, {
    onError: (key, err) => errors.push(`${key}: ${String(err).split("\n")[0]}`),
  });
  return {
    errors,
    stop: async () => {
      abort.abort();
      await workers;
    },
  };
}

beforeEach(async () => {
  controller = await startController(cluster.namespace);
}, 60_000);

afterEach(async () => {
  await controller?.stop();
  controller = undefined;
}, 60_000);

const webApp = (name: string, data: Record<string, string>, labelled = true): ConfigMap => ({
  apiVersion: "v1",
  kind: "ConfigMap",
  metadata: {
    name,
    namespace: cluster.namespace,
    ...(labelled ? { labels: { [kindLabel]: kindWebApp } } : {}),
  },
  data,
});
const configMaps = () => cluster.admin.coreV1.configMaps(cluster.namespace);
const deployments = () => cluster.admin.appsV1.deployments(cluster.namespace);
const deploymentOf = (name: string) =>
  deployments()
    .get(name)
    .catch(() => undefined);
const errorsSoFar = () => `the controller's errors: ${JSON.stringify(controller?.errors.slice(-5) ?? [])}`;

describe("a controller whose API is a ConfigMap labelled course.dev/kind=WebApp", () => {
  it("makes a Deployment of the WebApp's name, image and replicas", async () => {
    await configMaps().create(webApp("shop", { image: "course/web", replicas: "1" }));
    const d = await eventually("Deployment shop", () => deploymentOf("shop"), 60_000, errorsSoFar);
    expect(d.spec.replicas).toBe(1);
    expect(d.spec.template.spec?.containers.map((c) => c.image)).toEqual(["course/web"]);
  }, 120_000);

  it("applies a change of the WebApp to its Deployment", async () => {
    await configMaps().create(webApp("blog", { image: "course/web", replicas: "0" }));
    await eventually("Deployment blog", () => deploymentOf("blog"), 60_000, errorsSoFar);
    const cm = await configMaps().get("blog");
    await configMaps().update({ ...cm, data: { image: "course/web", replicas: "2" } });
    // A Conflict may come and be retried (the deployment controller writes the status meanwhile);
    // creating what already exists is a controller that does not look before it writes: that
    // fails at once, not after the wait.
    const createdAgain = () => {
      const again = controller?.errors.filter((e) => /already exists/i.test(e)) ?? [];
      if (again.length > 0) {
        throw new Error(
          `reconciling a WebApp whose Deployment exists must update it, not create it again: ${again[0]}`,
        );
      }
    };
    await eventually(
      "Deployment blog to have 2 replicas after the ConfigMap said 2",
      async () => {
        createdAgain();
        return (await deploymentOf("blog"))?.spec.replicas === 2;
      },
      60_000,
      errorsSoFar,
    );
    createdAgain();
  }, 120_000);

  it("leaves its Deployment to the garbage collector: deleting the WebApp deletes it", async () => {
    await configMaps().create(webApp("wiki", { image: "course/web", replicas: "0" }));
    await eventually("Deployment wiki", () => deploymentOf("wiki"), 60_000, errorsSoFar);
    await configMaps().delete("wiki");
    await eventually(
      "the garbage collector to delete Deployment wiki once its ConfigMap is gone (an ownerReference?)",
      () =>
        deployments()
          .get("wiki")
          .then(() => false)
          .catch((e) => isNotFound(e)),
      90_000,
    );
  }, 150_000);

  it("leaves a ConfigMap that is not labelled a WebApp alone", async () => {
    // One worker takes keys in the order their events came: once "after" has its Deployment,
    // "plain" (created first) has been handled too — or was never enqueued.
    await configMaps().create(webApp("plain", { image: "course/web", replicas: "0" }, false));
    await configMaps().create(webApp("after", { image: "course/web", replicas: "0" }));
    await eventually("Deployment after", () => deploymentOf("after"), 60_000, errorsSoFar);
    expect(
      await deploymentOf("plain"),
      "a Deployment for a ConfigMap without the WebApp label",
    ).toBeUndefined();
  }, 120_000);
});
