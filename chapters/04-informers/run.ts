/**
 * Chapter 4's demo — the client side of watch, as a controller runs it: a shared informer fed by
 * a reflector's list-and-watch, its cache and lister, a workqueue that collapses a burst of
 * changes into one sync, and (once the ReplicaSet controller is wired in) a ReplicaSet healing
 * itself.
 *
 * Solves: a learner who has read how Reflector → DeltaFIFO → Indexer → handlers fit together
 * should *see* it happen against a real, secured API server —
 * - the client is built as a component's is: the kube-controller-manager identity's client
 *   certificate from the PKI, over HTTPS, with the controller-manager's client QPS and burst;
 * - the informer lists (one request, a resourceVersion) and then watches from that
 *   resourceVersion; every event is printed as its handler receives it;
 * - the handler does not sync: it puts the object's key on a workqueue. Five quick updates of
 *   one pod are five events but fewer syncs, each reading the newest state from the cache —
 *   which is why controllers queue keys, not objects, and why they are level-triggered;
 * - the lister answers from memory: no request reaches the API server.
 *
 * Everything runs in this process: the API server (code/apiserver/server.ts, `startAPIServer`)
 * over HTTPS with x509 authentication and Node,RBAC authorization, as `kube-apiserver
 * --client-ca-file --authorization-mode=Node,RBAC` would start, and the client (code/client/).
 * The PKI is made once in `.tmp/chapter-04/pki/` and kept.
 *
 * Usage: npm run chapter -- 4 [--once] [--port N]
 *   --once     exit after the tour instead of serving (also: CHAPTER_ONCE=1); tests use it
 *   --port N   serve the API (HTTPS) on 127.0.0.1:N (default: a free port)
 *   CHAPTER_TMP=<dir>   keep the PKI and the kubeconfig there instead of .tmp/chapter-04
 *
 * @upstream none — course demo
 * @chapter 04-informers
 */
import { readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import type { ReplicaSet } from "../../code/api/apps.ts";
import type { Pod } from "../../code/api/core.ts";
import { selectorFromSet } from "../../code/api/labels.ts";
import { type APIServer, startAPIServer } from "../../code/apiserver/server.ts";
import { serviceAccountConfigForPKI } from "../../code/apiserver/testing/service-account-tokens.ts";
import { newSharedInformerFactory, Resources } from "../../code/client/informers/factory.ts";
import { type Clientset, newForConfig } from "../../code/client/kubernetes/clientset.ts";
import type { Config } from "../../code/client/rest/config.ts";
import { DeletedFinalStateUnknown } from "../../code/client/tools/cache/delta-fifo.ts";
import { Lister } from "../../code/client/tools/cache/listers.ts";
import { defaultControllerRateLimiter } from "../../code/client/util/workqueue/rate-limiters.ts";
import { newTypedRateLimitingQueue } from "../../code/client/util/workqueue/rate-limiting-queue.ts";
import { runWorkers } from "../../code/client/util/workqueue/worker.ts";
import { dynamicControllerClientBuilder } from "../../code/controllers/client-builder.ts";
import {
  type RunningControllerManager,
  startControllerManager,
} from "../../code/controllers/controller-manager.ts";
import { ensurePKI, type PKILayout } from "../../code/pki/certs.ts";
import { PKIError } from "../../code/pki/errors.ts";
import { createWithCerts, serializeKubeConfig } from "../../code/pki/kubeconfig.ts";
import {
  cyan,
  dim,
  heading,
  note,
  requestLog,
  runDemo,
  say,
  serveUntilInterrupt,
  servingDemo,
  sleep,
  step,
  stopOnInterrupt,
  suggest,
  tryKubectl,
  yellow,
} from "../demo.ts";

const { once, port, workDir } = servingDemo(4, "the API (HTTPS)");
const pkiDir = join(workDir, "pki");
const kubeconfigPath = join(workDir, "kubeconfig");
const ns = "demo";

/** A client's config as a component builds one: its own certificate, the cluster's CA, its own QPS. */
function configFor(server: APIServer, layout: PKILayout, id: string, qps: number, burst: number): Config {
  const who = layout.identities.find((i) => i.id === id);
  if (!who) throw new Error(`the PKI has no identity ${id}`);
  return {
    host: server.url,
    tlsClientConfig: { caFile: layout.caCert, certFile: who.cert, keyFile: who.key },
    qps,
    burst,
    userAgent: `chapter-04-demo/${id}`,
  };
}
const clientFor = (server: APIServer, layout: PKILayout, id: string, qps: number, burst: number): Clientset =>
  newForConfig(configFor(server, layout, id, qps, burst));
const controllerConfig = (server: APIServer, layout: PKILayout) =>
  configFor(server, layout, "kube-controller-manager", 20, 30);

const pod = (name: string, labels: Record<string, string>): Pod =>
  ({
    apiVersion: "v1",
    kind: "Pod",
    metadata: { name, namespace: ns, labels },
    spec: { containers: [{ name: "app", image: "nginx:1.27" }] },
  }) as Pod;

/** Waits until `ok` holds: the informer's cache and the worker follow the writes a moment later. */
async function eventually(what: string, ok: () => boolean): Promise<void> {
  const deadline = Date.now() + 10_000;
  while (!ok()) {
    if (Date.now() > deadline) throw new Error(`timed out after 10 s waiting for ${what}`);
    await sleep(10);
  }
}

async function main(): Promise<void> {
  heading("Informers and the workqueue — the client side of watch, against a secured API server");

  step("A PKI and a secured API server");
  const pki = await ensurePKI({ dir: pkiDir, nodes: ["node-1"], encryptionAlgorithm: "ECDSA-P256" });
  if (pki instanceof PKIError) throw new Error(`the PKI in ${pkiDir}: ${pki.message}`);
  const layout = pki.layout;
  say(
    `${pki.written.length > 0 ? `made ${pki.written.length} files` : `kept all ${pki.kept.length} files`} in ${cyan(pkiDir)}`,
  );
  const requests = requestLog();
  // Service-account tokens too: the controller-manager runs each controller as its own account.
  const sa = serviceAccountConfigForPKI(layout);
  const server = await startAPIServer({
    securePort: port,
    secureServing: { tlsCertFile: layout.apiServerCert, tlsPrivateKeyFile: layout.apiServerKey },
    authentication: { clientCAFile: layout.caCert, anonymousAuth: false, serviceAccounts: sa.authentication },
    serviceAccountTokens: sa.tokens,
    authorizationModes: ["Node", "RBAC"],
    admission: {},
    log: requests.log,
  });
  say(`Serving securely on ${cyan(server.url.replace(/^https:\/\//, ""))}`);

  const stop = new AbortController();
  let manager: RunningControllerManager | undefined;
  const shutdown = async () => {
    stop.abort();
    await manager?.stop();
    await server.close();
    say(
      "stopped the informer, the worker, the controller-manager and the API server: every object was in memory, and is gone",
    );
  };
  stopOnInterrupt(shutdown);

  // The admin writes (as kubectl would); the controller reads and reacts, as its own user.
  const admin = clientFor(server, layout, "admin", -1, 0);
  const controller = clientFor(server, layout, "kube-controller-manager", 20, 30);
  note("the controller's client: CN=system:kube-controller-manager over HTTPS, QPS 20 / burst 30");
  note("(kube-controller-manager's --kube-api-qps / --kube-api-burst defaults; client-go's own are 5 / 10)");
  await admin.coreV1.namespaces().create({ apiVersion: "v1", kind: "Namespace", metadata: { name: ns } });

  step("A shared informer on pods: list once, then watch from the list's resourceVersion");
  const factory = newSharedInformerFactory(controller, 0, { namespace: ns });
  const informer = factory.informerFor(Resources.pods);
  const queue = newTypedRateLimitingQueue<string>(defaultControllerRateLimiter());
  let events = 0;
  const keyOf = (o: Pod) => `${o.metadata.namespace}/${o.metadata.name}`;
  const show = (what: string, o: Pod) => {
    events++;
    say(
      `  ${cyan("informer")} ${what.padEnd(8)} ${keyOf(o)} ${dim(`rv ${o.metadata.resourceVersion}, labels ${JSON.stringify(o.metadata.labels ?? {})}`)}`,
    );
    queue.add(keyOf(o));
  };
  informer.addEventHandler({
    onAdd: (o) => show("ADDED", o as Pod),
    onUpdate: (_old, o) => show("MODIFIED", o as Pod),
    onDelete: (o) => {
      if (o instanceof DeletedFinalStateUnknown) {
        say(
          `  ${cyan("informer")} DELETED  ${o.key} ${dim("(inferred from a relist: DeletedFinalStateUnknown)")}`,
        );
        queue.add(o.key);
      } else show("DELETED", o as Pod);
    },
  });
  factory.start(stop.signal);
  await factory.waitForCacheSync(stop.signal);
  say(
    `synced: the list returned resourceVersion ${cyan(informer.lastSyncResourceVersion())}, 0 pods; the watch starts there`,
  );

  // The worker: one sync per key taken from the queue, reading the newest state from the cache.
  const lister = new Lister(informer.getIndexer());
  const syncs: string[] = [];
  let busy: Promise<void> | undefined;
  const sync = async (key: string) => {
    const [, name] = key.split("/");
    const cached = lister.byNamespace(ns).get(name) as Pod | undefined;
    syncs.push(key);
    say(
      `  ${yellow("worker")}   sync     ${key} ${dim(cached ? `sees labels ${JSON.stringify(cached.metadata.labels)}` : "sees it gone")}`,
    );
    // A slow reconcile — the API calls a real controller would make. In step 4 it is held until
    // all five updates have arrived, so the demo shows the same thing on a fast or a slow machine.
    await (busy ?? sleep(20));
  };
  const workers = runWorkers(queue, 1, sync, stop.signal);

  step("Three pods created: three ADDED events, each key queued and synced");
  for (const name of ["web-1", "web-2", "web-3"])
    await admin.coreV1.pods(ns).create(pod(name, { app: "web", v: "1" }));
  await eventually("three syncs", () => syncs.length >= 3 && queue.len() === 0);

  step("Five quick updates of web-1: five events, fewer syncs");
  const before = { events, syncs: syncs.length };
  let release = () => {};
  busy = new Promise<void>((r) => {
    release = r;
  });
  for (let v = 2; v <= 6; v++) {
    const cur = await admin.coreV1.pods(ns).get("web-1");
    cur.metadata.labels = { ...cur.metadata.labels, v: String(v) };
    await admin.coreV1.pods(ns).update(cur);
  }
  await eventually("the five events", () => events - before.events >= 5);
  busy = undefined;
  release();
  await eventually("the newest state synced", () => syncs.length - before.syncs >= 2 && queue.len() === 0);
  await sleep(50);
  const n = syncs.length - before.syncs;
  say(
    `five updates → ${events - before.events} events → ${cyan(String(n))} sync${n === 1 ? "" : "s"} of demo/web-1`,
  );
  note("the worker was busy with web-1's first update while the other four arrived: a key being");
  note("synced is not handed out again (the processing set); it is marked dirty once, however many");
  note("events come, and synced once more afterwards — reading the cache's newest state");

  step("The lister answers from the informer's cache: no request reaches the API server");
  const listed = lister.byNamespace(ns).list(selectorFromSet({ app: "web" }));
  say(`lister: app=web in ${ns} → ${listed.map((p) => p.metadata.name).join(", ")}`);
  say(
    `indexer.byIndex("namespace", "${ns}") → ${informer.getIndexer().byIndex("namespace", ns).length} pods`,
  );

  step("A pod deleted: DELETED, then a sync that finds it gone");
  await admin.coreV1.pods(ns).delete("web-2", { gracePeriodSeconds: 0 });
  await eventually("the sync of the deleted pod", () => syncs.at(-1) === `${ns}/web-2`);

  step("A controller-manager: a ReplicaSet that heals itself");
  const managerConfig = { ...controllerConfig(server, layout), qps: 20, burst: 30 };
  const managerClient = newForConfig(managerConfig);
  manager = await startControllerManager({
    client: managerClient,
    clientFor: dynamicControllerClientBuilder(managerClient, managerConfig),
    controllers: ["replicaset-controller"],
  });
  await manager.synced;
  say(`started ${cyan(manager.started.join(", "))}, as the ServiceAccount kube-system/replicaset-controller`);
  note(
    "as kube-controller-manager --kubeconfig=pki/kube-controller-manager.kubeconfig --controllers=replicaset",
  );
  note(
    "  --use-service-account-credentials: each controller gets a token of its own account, and its own RBAC role",
  );
  await admin.appsV1.replicaSets(ns).create({
    apiVersion: "apps/v1",
    kind: "ReplicaSet",
    metadata: { name: "frontend", namespace: ns },
    spec: {
      replicas: 3,
      selector: { matchLabels: { tier: "frontend" } },
      template: {
        metadata: { labels: { tier: "frontend" } },
        spec: { containers: [{ name: "app", image: "nginx:1.27" }] },
      },
    },
  } as ReplicaSet);
  const frontend = () => lister.byNamespace(ns).list(selectorFromSet({ tier: "frontend" }));
  await eventually("three frontend pods", () => frontend().length === 3);
  const names = frontend().map((p) => p.metadata.name as string);
  say(`ReplicaSet frontend (replicas 3) → pods ${names.map((n) => cyan(n)).join(", ")}`);
  note(
    "each with an ownerReference to the ReplicaSet, controller: true — the informer printed their ADDED above",
  );
  const victim = names[0] as string;
  await admin.coreV1.pods(ns).delete(victim, { gracePeriodSeconds: 0 });
  say(`deleted ${victim}`);
  await eventually(
    "a replacement",
    () => frontend().length === 3 && !frontend().some((p) => p.metadata.name === victim),
  );
  const replacement = frontend().find((p) => !names.includes(p.metadata.name ?? ""))?.metadata.name;
  say(
    `the controller saw 2 of 3 and created ${cyan(replacement ?? "?")}: desired state again, from the state, not the event`,
  );

  step("Now with the real kubectl");
  const adminId = layout.identities.find((i) => i.id === "admin");
  if (!adminId) throw new Error("the PKI has no admin identity");
  const kubeconfig = createWithCerts({
    server: server.url,
    clusterName: "kubernetes",
    userName: adminId.user,
    caCert: await readFile(layout.caCert, "utf8"),
    clientCert: await readFile(adminId.cert, "utf8"),
    clientKey: await readFile(adminId.key, "utf8"),
  });
  await writeFile(kubeconfigPath, serializeKubeConfig(kubeconfig), { mode: 0o600 });
  say(`kubeconfig written to ${cyan(kubeconfigPath)} ${dim("(the admin certificate; this run's port)")}`);
  suggest([
    [`export KUBECONFIG=${kubeconfigPath}`],
    [`kubectl -n ${ns} label pod web-1 v=7 --overwrite`, "the informer prints MODIFIED, the worker syncs"],
    [`kubectl -n ${ns} delete pod web-3`, "DELETED, then a sync that finds it gone"],
    [`kubectl -n ${ns} delete pods -l tier=frontend`, "the ReplicaSet controller makes three new ones"],
    [`kubectl -n ${ns} scale rs frontend --replicas=5`, "and two more"],
  ]);
  await tryKubectl(kubeconfigPath, ["-n", ns, "get", "pods"]);
  if (once) {
    stop.abort();
    await workers;
    await manager.stop();
  }
  await serveUntilInterrupt(once, shutdown, requests);
}

runDemo(main);
