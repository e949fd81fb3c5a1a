/**
 * Container environment — the `env` of a container spec turned into the variables its process
 * gets: literal values, the downward API's pod fields, and keys of ConfigMaps and Secrets.
 * Mirrors kubernetes/kubernetes pkg/kubelet/kubelet_pods.go (makeEnvironmentVariables, podFieldSelectorRuntimeValue).
 *
 * Solves: a process learns who and where it is (`POD_NAME`, `POD_IP`, `NODE_NAME`) and reads its
 * configuration from ConfigMaps and Secrets without talking to the API server itself.
 *
 * Invariants:
 * - variables are resolved in spec order, and `$(NAME)` in a value refers to a variable defined
 *   earlier (or is left as written); `$$` escapes a `$`;
 * - status.podIP is the IP of the sandbox the container is about to join, not the one in the API
 *   object (which may still be empty);
 * - a missing ConfigMap, Secret or key fails the container with CreateContainerConfigError,
 *   unless the reference is `optional`.
 *
 * Reduced: no envFrom, no resourceFieldRef, no service links (`<SVC>_SERVICE_HOST`), and no
 * $(VAR) expansion in command and args.
 *
 * @upstream kubernetes/kubernetes pkg/kubelet/kubelet_pods.go (makeEnvironmentVariables, podFieldSelectorRuntimeValue)
 * @upstream kubernetes/kubernetes third_party/forked/golang/expansion/expand.go (Expand)
 * @chapter 07-kubelet
 */

import type { ConfigMap, Container, Pod, Secret } from "../../api/core.ts";

export interface EnvSources {
  /** The ConfigMap, or undefined if it does not exist; absent: the kubelet has no API client. */
  getConfigMap?: (namespace: string, name: string) => Promise<ConfigMap | undefined>;
  getSecret?: (namespace: string, name: string) => Promise<Secret | undefined>;
  /** The node's IPs (status.hostIP / hostIPs). */
  nodeIPs?: string[];
}

export class EnvError extends Error {
  override name = "EnvError";
}

export async function makeEnvironmentVariables(
  pod: Pod,
  container: Container,
  podIP: string,
  podIPs: string[],
  sources: EnvSources,
): Promise<{ key: string; value: string }[]> {
  const ns = pod.metadata.namespace ?? "";
  const env = new Map<string, string>();
  for (const v of container.env ?? []) {
    let value: string | undefined;
    if (v.value !== undefined || !v.valueFrom) {
      value = expand(v.value ?? "", env);
    } else if (v.valueFrom.fieldRef) {
      value = podFieldSelectorRuntimeValue(
        v.valueFrom.fieldRef.fieldPath,
        pod,
        podIP,
        podIPs,
        sources.nodeIPs,
      );
    } else if (v.valueFrom.configMapKeyRef) {
      const { name = "", key, optional } = v.valueFrom.configMapKeyRef;
      if (!sources.getConfigMap)
        throw new EnvError(`couldn't get configMap ${ns}/${name}, no kubeClient defined`);
      const cm = await sources.getConfigMap(ns, name);
      if (!cm) {
        if (optional) continue;
        throw new EnvError(`configmap "${name}" not found`);
      }
      value = cm.data?.[key];
      if (value === undefined) {
        if (optional) continue;
        throw new EnvError(`couldn't find key ${key} in ConfigMap ${ns}/${name}`);
      }
    } else if (v.valueFrom.secretKeyRef) {
      const { name = "", key, optional } = v.valueFrom.secretKeyRef;
      if (!sources.getSecret) throw new EnvError(`couldn't get secret ${ns}/${name}, no kubeClient defined`);
      const secret = await sources.getSecret(ns, name);
      if (!secret) {
        if (optional) continue;
        throw new EnvError(`secret "${name}" not found`);
      }
      const b64 = secret.data?.[key];
      if (b64 === undefined) {
        if (optional) continue;
        throw new EnvError(`couldn't find key ${key} in Secret ${ns}/${name}`);
      }
      value = Buffer.from(b64, "base64").toString("utf8");
    } else {
      continue; // resourceFieldRef: not supported here
    }
    env.set(v.name, value);
  }
  return [...env].map(([key, value]) => ({ key, value }));
}

/** The downward API's pod fields a container can read from its environment. */
export function podFieldSelectorRuntimeValue(
  fieldPath: string,
  pod: Pod,
  podIP: string,
  podIPs: string[],
  nodeIPs: string[] = [],
): string {
  switch (fieldPath) {
    case "metadata.name":
      return pod.metadata.name ?? "";
    case "metadata.namespace":
      return pod.metadata.namespace ?? "";
    case "metadata.uid":
      return pod.metadata.uid ?? "";
    case "spec.nodeName":
      return pod.spec.nodeName ?? "";
    case "spec.serviceAccountName":
      return pod.spec.serviceAccountName ?? "";
    case "status.podIP":
      return podIP;
    case "status.podIPs":
      return podIPs.join(",");
    case "status.hostIP":
      return nodeIPs[0] ?? "";
    case "status.hostIPs":
      return nodeIPs.join(",");
  }
  const m = /^metadata\.(labels|annotations)\['(.+)'\]$/.exec(fieldPath);
  if (m) return (m[1] === "labels" ? pod.metadata.labels : pod.metadata.annotations)?.[m[2]] ?? "";
  throw new EnvError(`unsupported fieldPath: ${fieldPath}`);
}

/** `$(NAME)` → the value of an earlier variable, `$$` → `$`; anything else is kept as written. */
export function expand(input: string, env: Map<string, string>): string {
  return input.replace(/\$\$|\$\(([^)]*)\)/g, (whole, name: string | undefined) => {
    if (whole === "$$") return "$";
    return name !== undefined && env.has(name) ? (env.get(name) as string) : whole;
  });
}
