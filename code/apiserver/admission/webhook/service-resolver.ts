/**
 * The service resolver — from a webhook's `clientConfig.service` (namespace, name, port) to an
 * address this API server can reach: the Service's port, then one address of its Endpoints.
 * Upstream: the aggregator's EndpointServiceResolver (k8s.io/apiserver pkg/util/proxy
 * ResolveEndpoint), which kube-apiserver uses for webhooks with `--enable-aggregator-routing`;
 * without it, upstream dials the Service's cluster DNS name `<name>.<namespace>.svc:<port>`.
 *
 * Solves:
 * - this miniature has no cluster DNS and no service proxy, so a Service's name leads nowhere;
 *   its Endpoints name real addresses (a test registers its webhook server's 127.0.0.1 there);
 * - the TLS name stays the service's DNS name (`<name>.<namespace>.svc`): the webhook's serving
 *   certificate is checked for the service, whichever address answered.
 *
 * Invariants:
 * - only ClusterIP, NodePort and LoadBalancer services resolve; the Service port must be one
 *   the Service lists, and the Endpoints port is the one with the same name;
 * - no ready address is a 503 ServiceUnavailable, as upstream answers.
 *
 * @upstream kubernetes/kubernetes staging/src/k8s.io/apiserver/pkg/util/proxy/proxy.go (ResolveEndpoint, findServicePort)
 * @upstream kubernetes/kubernetes staging/src/k8s.io/apiserver/pkg/util/webhook/serviceresolver.go (defaultServiceResolver: <name>.<namespace>.svc)
 * @chapter 03-api-security
 */
import { randomInt } from "node:crypto";
import type { KubeObject } from "../../../api/meta.ts";
import { newServiceUnavailable } from "./errors.ts";

export type ObjectGetter = (namespace: string, name: string) => Promise<KubeObject>;

interface ServicePort {
  name?: string;
  port: number;
}
interface EndpointSubset {
  addresses?: { ip: string }[];
  ports?: { name?: string; port: number }[];
}

// #region resolve-endpoint
/** `https://<ip>:<port>` of one endpoint of the service's port (ResolveEndpoint). */
export async function resolveEndpoint(
  services: ObjectGetter,
  endpoints: ObjectGetter,
  namespace: string,
  name: string,
  port: number,
): Promise<URL> {
  const svc = await services(namespace, name);
  const spec = (svc.spec ?? {}) as { type?: string; ports?: ServicePort[] };
  const type = spec.type ?? "ClusterIP";
  if (!["ClusterIP", "LoadBalancer", "NodePort"].includes(type))
    throw new Error(`unsupported service type "${type}"`);
  const svcPort = (spec.ports ?? []).find((p) => p.port === port);
  if (!svcPort) throw newServiceUnavailable(`no service port ${port} found for service "${name}"`);
  const eps = await endpoints(namespace, name);
  for (const subset of (eps.subsets ?? []) as EndpointSubset[]) {
    const epPort = (subset.ports ?? []).find((p) => (p.name ?? "") === (svcPort.name ?? ""));
    const addresses = subset.addresses ?? [];
    if (epPort && addresses.length > 0) {
      const ip = addresses[randomInt(addresses.length)]!.ip;
      return new URL(`https://${ip.includes(":") ? `[${ip}]` : ip}:${epPort.port}`);
    }
  }
  throw newServiceUnavailable(`no endpoints available for service "${name}"`);
}
// #endregion resolve-endpoint
