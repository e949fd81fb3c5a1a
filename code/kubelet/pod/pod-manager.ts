/**
 * The pod manager — the kubelet's desired pods (what its sources want to run), plus the mirror
 * pods of its static pods.
 * Mirrors kubernetes/kubernetes pkg/kubelet/pod/pod_manager.go.
 *
 * Solves:
 * - a static pod is known by two UIDs: its own (from the file's hash; the one the runtime and
 *   the pod workers use) and its mirror pod's (the API object). The status manager writes to the
 *   mirror, the runtime runs the static pod: the manager pairs them by full name
 *   (`<name>_<namespace>`) and translates one UID into the other.
 * - a mirror pod comes through the API server source like any pod, but must never be run: it is
 *   filed apart from the pods to run.
 *
 * Invariants:
 * - every pod is in `podByUID` and `podByFullName`, or in the mirror maps, never both;
 * - translatePodUID maps a mirror pod's UID to its static pod's, any other UID to itself.
 *
 * @upstream kubernetes/kubernetes pkg/kubelet/pod/pod_manager.go (Manager, basicManager, SetPods, UpdatePod, RemovePod, GetPods, GetPodByUID, GetPodByFullName, GetMirrorPodByPod, GetPodByMirrorPod, GetUIDTranslations, TranslatePodUID, GetPodsAndMirrorPods)
 * @chapter 07-kubelet
 */

import type { Pod } from "../../api/core.ts";
import { isMirrorPod } from "../types/pod-update.ts";

/** kubecontainer.GetPodFullName: `<name>_<namespace>`. */
export const podFullName = (pod: Pod) => `${pod.metadata.name}_${pod.metadata.namespace}`;

export class PodManager {
  private podByUID = new Map<string, Pod>();
  private podByFullName = new Map<string, Pod>();
  private mirrorPodByUID = new Map<string, Pod>();
  private mirrorPodByFullName = new Map<string, Pod>();
  /** Static pod UID → mirror pod UID (GetUIDTranslations). */
  private translationByUID = new Map<string, string>();

  setPods(pods: Pod[]): void {
    this.podByUID.clear();
    this.podByFullName.clear();
    this.mirrorPodByUID.clear();
    this.mirrorPodByFullName.clear();
    this.translationByUID.clear();
    for (const p of pods) this.updatePod(p);
  }

  // #region update-pod
  /** Adds or replaces a pod (a mirror pod is filed apart). */
  updatePod(pod: Pod): void {
    const uid = pod.metadata.uid ?? "";
    const fullName = podFullName(pod);
    if (isMirrorPod(pod)) {
      this.mirrorPodByUID.set(uid, pod);
      this.mirrorPodByFullName.set(fullName, pod);
      const p = this.podByFullName.get(fullName);
      if (p) this.translationByUID.set(p.metadata.uid ?? "", uid);
      return;
    }
    this.podByUID.set(uid, pod);
    this.podByFullName.set(fullName, pod);
    const mirror = this.mirrorPodByFullName.get(fullName);
    if (mirror) this.translationByUID.set(uid, mirror.metadata.uid ?? "");
  }
  // #endregion update-pod

  removePod(pod: Pod): void {
    const uid = pod.metadata.uid ?? "";
    const fullName = podFullName(pod);
    if (isMirrorPod(pod)) {
      this.mirrorPodByUID.delete(uid);
      this.mirrorPodByFullName.delete(fullName);
      for (const [k, v] of this.translationByUID) if (v === uid) this.translationByUID.delete(k);
      return;
    }
    this.podByUID.delete(uid);
    this.podByFullName.delete(fullName);
    this.translationByUID.delete(uid);
  }

  /** The pods to run (no mirror pods). */
  getPods(): Pod[] {
    return [...this.podByUID.values()];
  }

  getPodsAndMirrorPods(): { pods: Pod[]; mirrorPods: Pod[] } {
    return { pods: this.getPods(), mirrorPods: [...this.mirrorPodByUID.values()] };
  }

  getPodByUID(uid: string): Pod | undefined {
    return this.podByUID.get(uid);
  }

  getPodByFullName(fullName: string): Pod | undefined {
    return this.podByFullName.get(fullName);
  }

  getMirrorPodByPod(pod: Pod): Pod | undefined {
    return this.mirrorPodByFullName.get(podFullName(pod));
  }

  getPodByMirrorPod(mirror: Pod): Pod | undefined {
    return this.podByFullName.get(podFullName(mirror));
  }

  /** For a static pod: its mirror's UID, or "" while it has none; undefined for any other pod. */
  mirrorUIDOf(uid: string, isStatic: (pod: Pod) => boolean): string | undefined {
    const pod = this.podByUID.get(uid);
    if (!pod || !isStatic(pod)) return undefined;
    return this.translationByUID.get(uid) ?? "";
  }

  translatePodUID(uid: string): string {
    const mirror = this.mirrorPodByUID.get(uid);
    if (!mirror) return uid;
    return this.podByFullName.get(podFullName(mirror))?.metadata.uid ?? uid;
  }
}
