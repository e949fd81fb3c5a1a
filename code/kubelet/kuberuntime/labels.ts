/**
 * Container labels and annotations — what the kubelet writes onto every sandbox and container so
 * that it can read its own state back from the runtime after a restart.
 * Mirrors kubernetes/kubernetes pkg/kubelet/kuberuntime/labels.go.
 *
 * Solves:
 * - the kubelet keeps no database: a container's restart count, the hash of the spec it was made
 *   from and its pod's grace periods live on the container itself, so a kubelet that restarts (or
 *   a pod it no longer knows) can still compute restartCount and kill the container correctly;
 * - listing "the containers of pod X" is a CRI label query on io.kubernetes.pod.uid.
 *
 * Invariants:
 * - labels are for filtering (pod name, namespace, uid, container name); everything else is an
 *   annotation, since runtimes index labels and annotations are free-form;
 * - the hash covers only the fields a pod may change in place (name and image, as upstream since
 *   1.31): any other change to a container spec is refused by the API server anyway;
 * - a missing or unreadable annotation reads as its zero value, as upstream's
 *   getContainerInfoFromAnnotations logs and carries on.
 *
 * Reduced: upstream's HashContainer runs FNV-32a over a spew dump of the JSON; ours hashes the
 * JSON bytes themselves, so the hex values differ from a real node's.
 *
 * @upstream kubernetes/kubernetes pkg/kubelet/kuberuntime/labels.go (newPodLabels, newPodAnnotations, newContainerLabels, newContainerAnnotations, getContainerInfoFromLabels, getContainerInfoFromAnnotations)
 * @upstream kubernetes/kubernetes pkg/kubelet/container/helpers.go (HashContainer, pickFieldsToHash)
 * @chapter 07-kubelet
 */

import type { Container, ContainerPort, LifecycleHandler, Pod } from "../../api/core.ts";
import {
  KubernetesContainerNameLabel,
  KubernetesPodNameLabel,
  KubernetesPodNamespaceLabel,
  KubernetesPodUIDLabel,
} from "../runtime/cri.ts";

export const podDeletionGracePeriodLabel = "io.kubernetes.pod.deletionGracePeriod";
export const podTerminationGracePeriodLabel = "io.kubernetes.pod.terminationGracePeriod";
export const containerHashLabel = "io.kubernetes.container.hash";
export const containerRestartCountLabel = "io.kubernetes.container.restartCount";
export const containerTerminationMessagePathLabel = "io.kubernetes.container.terminationMessagePath";
export const containerTerminationMessagePolicyLabel = "io.kubernetes.container.terminationMessagePolicy";
export const containerPreStopHandlerLabel = "io.kubernetes.container.preStopHandler";
export const containerPortsLabel = "io.kubernetes.container.ports";

/** The hash the kubelet compares to decide "this container's spec changed: recreate it". */
export function hashContainer(container: Container): string {
  // Go marshals a map with its keys sorted: image before name.
  return fnv32a(JSON.stringify({ image: container.image ?? "", name: container.name })).toString(16);
}

/** The sandbox's labels: the pod's own, plus the three the kubelet lists by. */
export function newPodLabels(pod: Pod): Record<string, string> {
  return {
    ...pod.metadata.labels,
    [KubernetesPodNameLabel]: pod.metadata.name ?? "",
    [KubernetesPodNamespaceLabel]: pod.metadata.namespace ?? "",
    [KubernetesPodUIDLabel]: pod.metadata.uid ?? "",
  };
}

export function newPodAnnotations(pod: Pod): Record<string, string> {
  return { ...pod.metadata.annotations };
}

export function newContainerLabels(container: Container, pod: Pod): Record<string, string> {
  return {
    [KubernetesPodNameLabel]: pod.metadata.name ?? "",
    [KubernetesPodNamespaceLabel]: pod.metadata.namespace ?? "",
    [KubernetesPodUIDLabel]: pod.metadata.uid ?? "",
    [KubernetesContainerNameLabel]: container.name,
  };
}

export function newContainerAnnotations(
  container: Container,
  pod: Pod,
  restartCount: number,
): Record<string, string> {
  const a: Record<string, string> = {
    [containerHashLabel]: hashContainer(container),
    [containerRestartCountLabel]: String(restartCount),
    [containerTerminationMessagePathLabel]: container.terminationMessagePath ?? "",
    [containerTerminationMessagePolicyLabel]: container.terminationMessagePolicy ?? "",
  };
  if (pod.metadata.deletionGracePeriodSeconds != null) {
    a[podDeletionGracePeriodLabel] = String(pod.metadata.deletionGracePeriodSeconds);
  }
  if (pod.spec.terminationGracePeriodSeconds != null) {
    a[podTerminationGracePeriodLabel] = String(pod.spec.terminationGracePeriodSeconds);
  }
  // JSON, so that killing the container of a pod the kubelet no longer knows can still run it.
  if (container.lifecycle?.preStop)
    a[containerPreStopHandlerLabel] = JSON.stringify(container.lifecycle.preStop);
  if (container.ports && container.ports.length > 0) a[containerPortsLabel] = JSON.stringify(container.ports);
  return a;
}

export interface LabeledContainerInfo {
  containerName: string;
  podName: string;
  podNamespace: string;
  podUID: string;
}

export function getContainerInfoFromLabels(labels: Record<string, string>): LabeledContainerInfo {
  return {
    podName: labels[KubernetesPodNameLabel] ?? "",
    podNamespace: labels[KubernetesPodNamespaceLabel] ?? "",
    podUID: labels[KubernetesPodUIDLabel] ?? "",
    containerName: labels[KubernetesContainerNameLabel] ?? "",
  };
}

export interface AnnotatedContainerInfo {
  hash: string;
  restartCount: number;
  podDeletionGracePeriod?: number;
  podTerminationGracePeriod?: number;
  terminationMessagePath: string;
  terminationMessagePolicy: string;
  preStopHandler?: LifecycleHandler;
  containerPorts: ContainerPort[];
}

export function getContainerInfoFromAnnotations(annotations: Record<string, string>): AnnotatedContainerInfo {
  const int = (key: string): number | undefined => {
    const v = annotations[key];
    if (v === undefined) return undefined;
    const n = Number.parseInt(v, 10);
    return Number.isNaN(n) ? undefined : n;
  };
  const json = <T>(key: string): T | undefined => {
    const v = annotations[key];
    if (v === undefined) return undefined;
    try {
      return JSON.parse(v) as T;
    } catch {
      return undefined;
    }
  };
  return {
    hash: annotations[containerHashLabel] ?? "",
    restartCount: int(containerRestartCountLabel) ?? 0,
    podDeletionGracePeriod: int(podDeletionGracePeriodLabel),
    podTerminationGracePeriod: int(podTerminationGracePeriodLabel),
    terminationMessagePath: annotations[containerTerminationMessagePathLabel] ?? "",
    terminationMessagePolicy: annotations[containerTerminationMessagePolicyLabel] ?? "",
    preStopHandler: json<LifecycleHandler>(containerPreStopHandlerLabel),
    containerPorts: json<ContainerPort[]>(containerPortsLabel) ?? [],
  };
}

function fnv32a(text: string): number {
  let hash = 0x811c9dc5;
  for (const byte of new TextEncoder().encode(text)) {
    hash ^= byte;
    hash = Math.imul(hash, 0x01000193) >>> 0;
  }
  return hash;
}
