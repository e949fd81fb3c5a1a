// Exercise 4.6, graded against the real API server: every namespace gets kube-root-ca.crt, a
// deleted one comes back, an edited one is restored, nothing is written when all is right, a
// refused write is retried, a terminating namespace is left alone, and nothing happens before
// the caches are synced. The controller talks to the server through a proxy that logs every
// ConfigMap write it makes and can refuse some with a 500; the test's own writes go direct.
import { createServer, request, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import type { ConfigMap, Namespace } from "../../../code/api/core.ts";
import { type APIServer, startAPIServer, systemNamespaces } from "../../../code/apiserver/server.ts";
import { newSharedInformerFactory } from "../../../code/client/informers/factory.ts";
import { type Clientset, newForConfig } from "../../../code/client/kubernetes/clientset.ts";
import { Description, DescriptionAnnotation, Publisher, RootCACertConfigMapName } from "./publisher.ts";

const CA = "-----BEGIN CERTIFICATE-----\nMIIBcourseCA\n-----END CERTIFICATE-----\n";
const WAIT_MS = 2500;

/** One ConfigMap write the controller sent: `POST team-a 201`. */
interface Write {
  method: string;
  namespace: string;
  status: number;
}

/** A proxy in front of the API server: logs ConfigMap writes, refuses chosen ones, delays lists. */
interface Proxy {
  url: string;
  writes: Write[];
  /** Refuse the next `times` writes (`method`) to ConfigMaps in `namespace` with a 500. */
  refuse(method: string, namespace: string, times: number): void;
  close(): Promise<void>;
}

async function startProxy(target: string, opts: { delayConfigMapListMs?: number } = {}): Promise<Proxy> {
  const upstream = new URL(target);
  const writes: Write[] = [];
  const refusals: { method: string; namespace: string; left: number }[] = [];
  const server: Server = createServer((req, res) => {
    const url = new URL(req.url ?? "/", "http://proxy");
    const m = /^\/api\/v1\/namespaces\/([^/]+)\/configmaps(\/|$)/.exec(url.pathname);
    const method = req.method ?? "GET";
    const isWrite = m !== null && method !== "GET";
    const refusal = isWrite
      ? refusals.find((r) => r.method === method && r.namespace === m[1] && r.left > 0)
      : undefined;
    if (refusal) {
      refusal.left--;
      writes.push({ method, namespace: m![1], status: 500 });
      req.resume();
      req.on("end", () => {
        res.writeHead(500, { "Content-Type": "application/json" });
        res.end(
          JSON.stringify({
            kind: "Status",
            apiVersion: "v1",
            metadata: {},
            status: "Failure",
            message: "injected by the test's proxy",
            reason: "InternalError",
            code: 500,
          }),
        );
      });
      return;
    }
    const forward = () => {
      const up = request(
        { host: upstream.hostname, port: upstream.port, path: req.url, method, headers: req.headers },
        (ur) => {
          if (isWrite) writes.push({ method, namespace: m![1], status: ur.statusCode ?? 0 });
          res.writeHead(ur.statusCode ?? 502, ur.headers);
          ur.pipe(res);
        },
      );
      up.on("error", () => res.destroy());
      req.pipe(up);
    };
    const isConfigMapList =
      method === "GET" && url.pathname === "/api/v1/configmaps" && url.searchParams.get("watch") !== "true";
    if (isConfigMapList && opts.delayConfigMapListMs) setTimeout(forward, opts.delayConfigMapListMs);
    else forward();
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    writes,
    refuse: (method, namespace, times) => void refusals.push({ method, namespace, left: times }),
    close: async () => {
      server.closeAllConnections();
      await new Promise<void>((r) => server.close(() => r()));
    },
  };
}

interface Cluster {
  /** The test's own client, straight to the API server. */
  direct: Clientset;
  proxy: Proxy;
  stop(): Promise<void>;
}

let running: Cluster | undefined;
afterEach(async () => {
  await running?.stop();
  running = undefined;
});

/** The API server, the proxy, and the learner's Publisher running one worker behind it. */
async function startCluster(
  opts: { delayConfigMapListMs?: number; before?: (direct: Clientset) => Promise<void> } = {},
): Promise<Cluster> {
  const server: APIServer = await startAPIServer({ insecurePort: 0 });
  const direct = newForConfig({ host: server.url, qps: -1 });
  const stopping = new AbortController();
  let proxy: Proxy | undefined;
  let client: Clientset | undefined;
  let done: Promise<unknown> = Promise.resolve();
  const stop = async () => {
    stopping.abort();
    await Promise.race([done, new Promise((r) => setTimeout(r, 1000))]);
    client?.closeIdleConnections();
    direct.closeIdleConnections();
    await proxy?.close();
    await server.close();
  };
  try {
    await opts.before?.(direct);
    proxy = await startProxy(server.url, opts);
    client = newForConfig({ host: proxy.url, qps: -1 });
    const factory = newSharedInformerFactory(client, 0);
    const publisher = new Publisher(client, factory, CA);
    // As the controller-manager does: controllers first, then the informers they asked for.
    factory.start(stopping.signal);
    runFailed = undefined;
    done = Promise.resolve()
      .then(() => publisher.run(1, stopping.signal))
      .catch((err) => {
        runFailed = err ?? "rejected";
      });
  } catch (err) {
    await stop();
    throw err;
  }
  running = { direct, proxy, stop };
  return running;
}

/** Set when the controller's run() fails: every wait then fails at once, with its error. */
let runFailed: unknown;

async function until(what: string, ok: () => Promise<boolean>): Promise<void> {
  const end = Date.now() + WAIT_MS;
  while (!(await ok())) {
    if (runFailed !== undefined) throw new Error(`run() failed: ${String(runFailed)}`);
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

async function rootCA(c: Clientset, ns: string): Promise<ConfigMap | undefined> {
  try {
    return await c.coreV1.configMaps(ns).get(RootCACertConfigMapName);
  } catch {
    return undefined;
  }
}

const published = (c: Clientset, ns: string) => async () => (await rootCA(c, ns))?.data?.["ca.crt"] === CA;

async function createNamespace(c: Clientset, name: string): Promise<void> {
  await c.coreV1
    .namespaces()
    .create({ apiVersion: "v1", kind: "Namespace", metadata: { name } } as Namespace);
}

/** A namespace made after everything before it, and published: the one worker is past those. */
async function sentinel(c: Cluster, name: string): Promise<void> {
  await createNamespace(c.direct, name);
  await until(`kube-root-ca.crt in the sentinel namespace ${name}`, published(c.direct, name));
}

/**
 * A ConfigMap deleted after everything before it, and back: the controller's ConfigMap cache has
 * seen every earlier ConfigMap event (one watch, in order).
 */
async function configMapSentinel(c: Cluster): Promise<void> {
  await c.direct.coreV1.configMaps("kube-public").delete(RootCACertConfigMapName);
  await until("kube-root-ca.crt back in kube-public", published(c.direct, "kube-public"));
}

const writesTo = (c: Cluster, ns: string) => c.proxy.writes.filter((w) => w.namespace === ns);

describe("the root CA publisher against the API server", () => {
  it("publishes the CA in every namespace, those there before it started and new ones", async () => {
    const c = await startCluster();
    for (const ns of systemNamespaces) await until(`kube-root-ca.crt in ${ns}`, published(c.direct, ns));
    await createNamespace(c.direct, "team-a");
    await until("kube-root-ca.crt in team-a", published(c.direct, "team-a"));
    const cm = await rootCA(c.direct, "team-a");
    expect(cm?.data).toEqual({ "ca.crt": CA });
    expect(cm?.metadata.annotations?.[DescriptionAnnotation]).toBe(Description);
  });

  it("brings a deleted ConfigMap back, every time", async () => {
    const c = await startCluster();
    await createNamespace(c.direct, "team-a");
    await until("kube-root-ca.crt in team-a", published(c.direct, "team-a"));
    for (const round of [1, 2]) {
      await c.direct.coreV1.configMaps("team-a").delete(RootCACertConfigMapName);
      await until(`kube-root-ca.crt back in team-a after deletion ${round}`, published(c.direct, "team-a"));
    }
  });

  it("restores an edited ConfigMap, data exactly as it should be", async () => {
    const c = await startCluster();
    await createNamespace(c.direct, "team-a");
    await until("kube-root-ca.crt in team-a", published(c.direct, "team-a"));
    const cm = (await rootCA(c.direct, "team-a"))!;
    await c.direct.coreV1.configMaps("team-a").update({ ...cm, data: { "ca.crt": "tampered", extra: "x" } });
    await until("kube-root-ca.crt restored in team-a", async () => {
      const now = await rootCA(c.direct, "team-a");
      return now?.data?.["ca.crt"] === CA && Object.keys(now.data).length === 1;
    });
  });

  it("writes nothing when the ConfigMap is already right", async () => {
    const c = await startCluster();
    await createNamespace(c.direct, "team-a");
    await until("kube-root-ca.crt in team-a", published(c.direct, "team-a"));
    await configMapSentinel(c);
    expect(writesTo(c, "team-a").map((w) => `${w.method} ${w.status}`)).toEqual(["POST 201"]);
    // The controller's cache has team-a's ConfigMap; a namespace update is a sync of team-a whose ConfigMap is right.
    const ns = await c.direct.coreV1.namespaces().get("team-a");
    await c.direct.coreV1
      .namespaces()
      .update({ ...ns, metadata: { ...ns.metadata, labels: { team: "a" } } } as Namespace);
    await sentinel(c, "z-after-label");
    expect(writesTo(c, "team-a").map((w) => `${w.method} ${w.status}`)).toEqual(["POST 201"]);
  });

  it("retries a write the server refused (a 500), until it lands", async () => {
    const c = await startCluster();
    c.proxy.refuse("POST", "flaky", 2);
    await createNamespace(c.direct, "flaky");
    await until("kube-root-ca.crt in flaky after two refused creates", published(c.direct, "flaky"));
    expect(writesTo(c, "flaky").map((w) => `${w.method} ${w.status}`)).toEqual([
      "POST 500",
      "POST 500",
      "POST 201",
    ]);
  });

  it("leaves a terminating namespace alone", async () => {
    const c = await startCluster();
    await createNamespace(c.direct, "leaving");
    await until("kube-root-ca.crt in leaving", published(c.direct, "leaving"));
    // No namespace controller runs: the namespace stays Terminating.
    await c.direct.coreV1.namespaces().delete("leaving");
    // The namespace informer has seen "leaving" terminate once it has seen a later namespace.
    await sentinel(c, "z-after-delete");
    await c.direct.coreV1.configMaps("leaving").delete(RootCACertConfigMapName);
    // The ConfigMap informer's events come in order: default's deletion is handled after leaving's.
    await c.direct.coreV1.configMaps("default").delete(RootCACertConfigMapName);
    await until("kube-root-ca.crt back in default", published(c.direct, "default"));
    expect(await rootCA(c.direct, "leaving")).toBeUndefined();
    expect(writesTo(c, "leaving").map((w) => `${w.method} ${w.status}`)).toEqual(["POST 201"]);
  });

  it("does nothing before its caches are synced (no create of a ConfigMap that exists)", async () => {
    // Every namespace already has the right ConfigMap; the controller's ConfigMap list is slow.
    const c = await startCluster({
      delayConfigMapListMs: 400,
      before: async (direct) => {
        for (const ns of systemNamespaces) {
          await direct.coreV1.configMaps(ns).create({
            apiVersion: "v1",
            kind: "ConfigMap",
            metadata: {
              name: RootCACertConfigMapName,
              annotations: { [DescriptionAnnotation]: Description },
            },
            data: { "ca.crt": CA },
          });
        }
      },
    });
    await sentinel(c, "z-new");
    expect(c.proxy.writes.map((w) => `${w.method} ${w.namespace} ${w.status}`)).toEqual(["POST z-new 201"]);
  });
});
