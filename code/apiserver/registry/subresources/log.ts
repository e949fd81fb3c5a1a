/**
 * pods/log — `GET …/pods/web/log`: a placeholder until the kubelet exists.
 * Upstream: `LogREST` in kubernetes pkg/registry/core/pod/rest/log.go.
 *
 * Solves: `kubectl logs web` gets an answer that says where logs will come from, rather than a
 * 404 that looks like a missing pod. Upstream's API server does not hold logs either: it proxies
 * the request to the kubelet of the pod's node (chapter 7 wires that up).
 *
 * Invariants: a missing pod is a 404; a pod not yet on a node is upstream's 400.
 *
 * @upstream kubernetes/kubernetes pkg/registry/core/pod/rest/log.go (LogREST.Get)
 * @upstream kubernetes/kubernetes pkg/registry/core/pod/strategy.go (LogLocation: "does not have a host assigned")
 * @chapter 02-apiserver
 */
import { newBadRequest } from "../../errors.ts";
import type { Store } from "../store.ts";

// #region pod-log
export async function podLog(pods: Store, namespace: string, name: string): Promise<string> {
  const pod = await pods.get(namespace, name);
  const nodeName = (pod.spec as { nodeName?: string } | undefined)?.nodeName;
  if (!nodeName) throw newBadRequest(`pod ${name} does not have a host assigned`);
  return `(pod ${namespace}/${name} runs on node ${nodeName}; its logs are served by the kubelet, which arrives in chapter 7)\n`;
}
// #endregion pod-log
