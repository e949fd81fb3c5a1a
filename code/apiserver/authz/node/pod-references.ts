/**
 * What a pod references — every secret, configmap, persistent volume claim and resource claim
 * named in its spec, which is exactly what its kubelet will need to read to run it. Upstream:
 * kubernetes pkg/api/v1/pod/util.go (VisitPodSecretNames, VisitPodConfigmapNames),
 * component-helpers storage/ephemeral (VolumeClaimName) and dynamic-resource-allocation
 * resourceclaim (Name).
 *
 * Solves: the Node authorizer grants a node the objects its pods use, so "uses" must be one
 * precise list — a reference missed here is a pod that cannot start; one invented here is a
 * secret leaked to a node that has no business with it.
 *
 * Invariants:
 * - init, regular and ephemeral containers are all visited (upstream's AllContainers);
 * - only direct references: pod → pvc → pv → secret is the graph's business, not this file's;
 * - empty names are skipped (they name nothing a node could ask for).
 *
 * @upstream kubernetes/kubernetes pkg/api/v1/pod/util.go (VisitPodSecretNames, visitContainerSecretNames, VisitPodConfigmapNames, visitContainerConfigmapNames, VisitContainers)
 * @upstream kubernetes/kubernetes staging/src/k8s.io/component-helpers/storage/ephemeral/ephemeral.go (VolumeClaimName)
 * @upstream kubernetes/kubernetes staging/src/k8s.io/dynamic-resource-allocation/resourceclaim/resourceclaim.go (Name)
 * @upstream kubernetes/kubernetes pkg/api/v1/persistentvolume/util.go (VisitPVSecretNames)
 * @chapter 03-api-security
 */
import type { KubeObject } from "../../../api/meta.ts";

// The few fields read here, loosely typed: a pod from storage is plain JSON.
type Ref = { name?: string } | undefined;
interface ContainerRefs {
  envFrom?: { secretRef?: Ref; configMapRef?: Ref }[];
  env?: { valueFrom?: { secretKeyRef?: Ref; configMapKeyRef?: Ref } }[];
}
interface VolumeRefs {
  name: string;
  secret?: { secretName?: string };
  configMap?: Ref;
  projected?: { sources?: { secret?: Ref; configMap?: Ref }[] };
  azureFile?: { secretName?: string };
  cephfs?: { secretRef?: Ref };
  cinder?: { secretRef?: Ref };
  flexVolume?: { secretRef?: Ref };
  rbd?: { secretRef?: Ref };
  scaleIO?: { secretRef?: Ref };
  iscsi?: { secretRef?: Ref };
  storageos?: { secretRef?: Ref };
  csi?: { nodePublishSecretRef?: Ref };
  persistentVolumeClaim?: { claimName?: string };
  ephemeral?: unknown;
}
export interface PodRefs extends KubeObject {
  spec?: {
    nodeName?: string;
    serviceAccountName?: string;
    imagePullSecrets?: Ref[];
    initContainers?: ContainerRefs[];
    containers?: ContainerRefs[];
    ephemeralContainers?: ContainerRefs[];
    volumes?: VolumeRefs[];
    resourceClaims?: { name: string; resourceClaimName?: string; resourceClaimTemplateName?: string }[];
  };
  status?: { resourceClaimStatuses?: { name: string; resourceClaimName?: string }[] };
}

function allContainers(pod: PodRefs): ContainerRefs[] {
  const spec = pod.spec ?? {};
  return [...(spec.initContainers ?? []), ...(spec.containers ?? []), ...(spec.ephemeralContainers ?? [])];
}

function distinct(names: (string | undefined)[]): string[] {
  return [...new Set(names.filter((n): n is string => !!n))];
}

// #region pod-secrets
/** VisitPodSecretNames: pull secrets, env and envFrom, and every volume type that names a secret. */
export function podSecretNames(pod: PodRefs): string[] {
  const names: (string | undefined)[] = (pod.spec?.imagePullSecrets ?? []).map((r) => r?.name);
  for (const c of allContainers(pod)) {
    for (const e of c.envFrom ?? []) names.push(e.secretRef?.name);
    for (const e of c.env ?? []) names.push(e.valueFrom?.secretKeyRef?.name);
  }
  for (const v of pod.spec?.volumes ?? []) {
    names.push(
      v.secret?.secretName,
      v.azureFile?.secretName,
      v.cephfs?.secretRef?.name,
      v.cinder?.secretRef?.name,
      v.flexVolume?.secretRef?.name,
      v.rbd?.secretRef?.name,
      v.scaleIO?.secretRef?.name,
      v.iscsi?.secretRef?.name,
      v.storageos?.secretRef?.name,
      v.csi?.nodePublishSecretRef?.name,
    );
    for (const s of v.projected?.sources ?? []) names.push(s.secret?.name);
  }
  return distinct(names);
}

/** VisitPodConfigmapNames: env, envFrom, configMap volumes and projected sources. */
export function podConfigMapNames(pod: PodRefs): string[] {
  const names: (string | undefined)[] = [];
  for (const c of allContainers(pod)) {
    for (const e of c.envFrom ?? []) names.push(e.configMapRef?.name);
    for (const e of c.env ?? []) names.push(e.valueFrom?.configMapKeyRef?.name);
  }
  for (const v of pod.spec?.volumes ?? []) {
    names.push(v.configMap?.name);
    for (const s of v.projected?.sources ?? []) names.push(s.configMap?.name);
  }
  return distinct(names);
}
// #endregion pod-secrets

// #region pod-claims
/**
 * The PVCs a pod mounts: `persistentVolumeClaim.claimName`, and for a generic ephemeral volume
 * the claim the ephemeral-volume controller creates for it, `<pod>-<volume>`.
 */
export function podPVCNames(pod: PodRefs): string[] {
  return distinct(
    (pod.spec?.volumes ?? []).map((v) =>
      v.persistentVolumeClaim
        ? v.persistentVolumeClaim.claimName
        : v.ephemeral
          ? `${pod.metadata.name}-${v.name}`
          : "",
    ),
  );
}

/**
 * The ResourceClaims a pod uses (resourceclaim.Name): a claim named directly, or the one made
 * from a template once the pod's status records its name — before that there is nothing to grant.
 */
export function podResourceClaimNames(pod: PodRefs): string[] {
  const statuses = pod.status?.resourceClaimStatuses ?? [];
  return distinct(
    (pod.spec?.resourceClaims ?? []).map((c) =>
      c.resourceClaimName ? c.resourceClaimName : statuses.find((s) => s.name === c.name)?.resourceClaimName,
    ),
  );
}
// #endregion pod-claims

/**
 * The secrets a PersistentVolume names that the kubelet itself reads, with their namespace.
 * Only CSI's node-side secret references here (nodePublish, nodeStage, nodeExpand); upstream
 * also walks the in-tree volume plugins' secret references.
 */
export function pvKubeletSecretRefs(pv: KubeObject): { namespace: string; name: string }[] {
  type SecretRef = { name?: string; namespace?: string } | undefined;
  const csi = (pv.spec as { csi?: Record<string, SecretRef> } | undefined)?.csi;
  if (!csi) return [];
  const refs = [csi.nodePublishSecretRef, csi.nodeStageSecretRef, csi.nodeExpandSecretRef];
  return refs
    .filter((r): r is { name: string; namespace: string } => !!r?.name && !!r.namespace)
    .map((r) => ({ namespace: r.namespace, name: r.name }));
}
