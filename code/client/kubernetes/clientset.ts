/**
 * Clientset — one object that reaches every resource a component needs: `coreV1.pods(ns)`,
 * `appsV1.replicaSets(ns)`, `coordinationV1.leases(ns)`, and `resource(gvr, ns)` for anything else.
 * Mirrors client-go kubernetes/clientset.go (NewForConfig, Clientset, CoreV1, AppsV1, …) and the
 * typed group clients under kubernetes/typed/ (only their names: each is a ResourceClient).
 *
 * Solves:
 * - a component's rate limit is one budget for all its requests, whatever group they go to, so
 *   the clientset makes one token bucket and every group client shares it (as NewForConfig does
 *   when qps is set); and one keep-alive transport, so connections are reused across groups;
 * - typed names a learner can look up in client-go without hundreds of generated lines: each
 *   accessor is one line naming a ResourceClient of the right kind.
 *
 * Invariants:
 * - one RESTClient per group version, made on first use and kept;
 * - when `qps` is set (> 0) every group client waits on the same bucket; when it is left at 0,
 *   each group client gets its own default 5/10 bucket — client-go 1.32 behaves so too
 *   (NewForConfigAndClient shares a limiter only if QPS > 0).
 *
 * @upstream kubernetes/client-go kubernetes/clientset.go (NewForConfig, NewForConfigAndClient, Clientset)
 * @upstream kubernetes/client-go kubernetes/typed/core/v1/pod.go (PodInterface: Bind via the binding subresource)
 * @upstream kubernetes/client-go kubernetes/typed/core/v1/pod_expansion.go (Bind, Evict)
 * @chapter 04-informers
 */
import type { Deployment, ReplicaSet } from "../../api/apps.ts";
import type { Lease } from "../../api/coordination.ts";
import type {
  Binding,
  ConfigMap,
  Event,
  Namespace,
  Node,
  Pod,
  Secret,
  Service,
  ServiceAccount,
} from "../../api/core.ts";
import type { KubeObject } from "../../api/meta.ts";
import type { GroupVersion, GroupVersionResource } from "../../api/schema.ts";
import { RESTClient } from "../rest/client.ts";
import { type Config, ConfigError } from "../rest/config.ts";
import { type Transport, transportFor } from "../rest/transport.ts";
import { realClock } from "../util/clock.ts";
import { newTokenBucketRateLimiter } from "../util/flowcontrol/token-bucket.ts";
import { type CallOptions, type CreateOptions, ResourceClient } from "./resource.ts";

// #region typed
/** Pods, plus the binding subresource the scheduler writes (pod_expansion.go Bind). */
export class PodClient extends ResourceClient<Pod> {
  /** POST pods/<binding.metadata.name>/binding: assigns the pod to `binding.target.name`. */
  bind(binding: Binding, opts: CreateOptions & CallOptions = {}): Promise<unknown> {
    return this.createSubresource(binding.metadata.name ?? "", "binding", binding, opts);
  }
}

export class CoreV1Client {
  constructor(readonly restClient: RESTClient) {}
  pods = (namespace: string) => new PodClient(this.restClient, "pods", namespace);
  nodes = () => new ResourceClient<Node>(this.restClient, "nodes");
  namespaces = () => new ResourceClient<Namespace>(this.restClient, "namespaces");
  events = (namespace: string) => new ResourceClient<Event>(this.restClient, "events", namespace);
  configMaps = (namespace: string) => new ResourceClient<ConfigMap>(this.restClient, "configmaps", namespace);
  secrets = (namespace: string) => new ResourceClient<Secret>(this.restClient, "secrets", namespace);
  services = (namespace: string) => new ResourceClient<Service>(this.restClient, "services", namespace);
  serviceAccounts = (namespace: string) =>
    new ResourceClient<ServiceAccount>(this.restClient, "serviceaccounts", namespace);
}

export class AppsV1Client {
  constructor(readonly restClient: RESTClient) {}
  replicaSets = (namespace: string) =>
    new ResourceClient<ReplicaSet>(this.restClient, "replicasets", namespace);
  deployments = (namespace: string) =>
    new ResourceClient<Deployment>(this.restClient, "deployments", namespace);
}

export class CoordinationV1Client {
  constructor(readonly restClient: RESTClient) {}
  leases = (namespace: string) => new ResourceClient<Lease>(this.restClient, "leases", namespace);
}
// #endregion typed

// #region clientset
export class Clientset {
  private readonly clients = new Map<string, RESTClient>();
  private readonly config: Config;
  private readonly transport: Transport;

  readonly coreV1: CoreV1Client;
  readonly appsV1: AppsV1Client;
  readonly coordinationV1: CoordinationV1Client;

  constructor(config: Config) {
    // One bucket for the whole component when it set its qps (NewForConfigAndClient).
    const qps = config.qps ?? 0;
    const burst = config.burst ?? 0;
    let rateLimiter = config.rateLimiter;
    if (!rateLimiter && qps > 0) {
      if (burst <= 0)
        throw new ConfigError(
          `burst must be greater than 0 when qps is greater than 0 (qps=${qps}, burst=${burst})`,
        );
      rateLimiter = newTokenBucketRateLimiter(qps, burst, config.clock ?? realClock);
    }
    this.config = { ...config, rateLimiter };
    this.transport = transportFor(this.config);
    this.coreV1 = new CoreV1Client(this.restClientFor({ group: "", version: "v1" }));
    this.appsV1 = new AppsV1Client(this.restClientFor({ group: "apps", version: "v1" }));
    this.coordinationV1 = new CoordinationV1Client(
      this.restClientFor({ group: "coordination.k8s.io", version: "v1" }),
    );
  }

  /** The RESTClient of one group version, shared by every resource in it. */
  restClientFor(gv: GroupVersion): RESTClient {
    const key = `${gv.group}/${gv.version}`;
    let c = this.clients.get(key);
    if (!c) {
      c = new RESTClient(this.config, gv, this.transport);
      this.clients.set(key, c);
    }
    return c;
  }

  /** Any resource, by group/version/resource: `resource({group: "apps", version: "v1", resource: "deployments"}, "default")`. */
  resource<T extends KubeObject = KubeObject>(gvr: GroupVersionResource, namespace = ""): ResourceClient<T> {
    return new ResourceClient<T>(this.restClientFor(gvr), gvr.resource, namespace);
  }

  /** Closes idle kept-alive connections (open watches are left alone). */
  closeIdleConnections(): void {
    this.transport.closeIdleConnections();
  }
}
// #endregion clientset

/** kubernetes.NewForConfig. Throws ConfigError for a config that cannot make a client. */
export function newForConfig(config: Config): Clientset {
  return new Clientset(config);
}
