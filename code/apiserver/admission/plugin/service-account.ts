/**
 * ServiceAccount — every pod runs as a service account: `default` unless it names one, which
 * must exist; and, unless the pod or the account opts out, every container gets the account's
 * token, the cluster's CA and its namespace mounted at /var/run/secrets/kubernetes.io/serviceaccount.
 * Upstream: kubernetes plugin/pkg/admission/serviceaccount/admission.go.
 *
 * Solves:
 * - a program in a pod can call the API server with no configuration at all (client-go's
 *   in-cluster config reads exactly those three files), as the identity the pod was given;
 * - a pod naming an account that does not exist is refused now, not left without credentials;
 * - mirror pods (the kubelet's copies of static pods) are not the API server's to change: the
 *   kubelet would see a different spec and delete them, so they may not use accounts or secrets.
 *
 * Invariants:
 * - the token volume is one projected volume `kube-api-access-<5 random>`: a bound token
 *   (expirationSeconds 3607, refreshed by the kubelet), `ca.crt` from the `kube-root-ca.crt`
 *   ConfigMap, and the pod's namespace from the downward API — upstream's shape field for field;
 * - a container that already mounts something at the token path is left alone; a pod that
 *   already has a `kube-api-access-` volume keeps it;
 * - admit mutates, validate re-checks the final pod (another plugin or webhook may have changed it).
 *
 * Where the `default` account comes from: upstream's serviceaccounts controller (in
 * kube-controller-manager, chapter 4) creates it in every namespace. Until that controller is
 * built, the API server creates `default` in the system namespaces at start when this plugin is
 * on (`ensureDefaultServiceAccounts`), and a test or learner creates it in any other namespace.
 *
 * @upstream kubernetes/kubernetes plugin/pkg/admission/serviceaccount/admission.go (Plugin.Admit, Plugin.Validate, shouldAutomount, mountServiceAccountToken, TokenVolumeSource, DefaultAPITokenMountPath)
 * @upstream kubernetes/kubernetes pkg/controller/serviceaccount/serviceaccounts_controller.go (the `default` account per namespace)
 * @chapter 03-api-security
 */
import type { Container, Pod as CorePod, PodSpec, ServiceAccount, Volume } from "../../../api/core.ts";
import type { KubeObject } from "../../../api/meta.ts";
import { isStatusError, newNotFound } from "../../errors.ts";
import type { Store } from "../../registry/store.ts";
import { generateName } from "../../registry/store.ts";
import type { PluginContext } from "../context.ts";
import { newAdmissionForbidden } from "../errors.ts";
import type { Attributes, MutationInterface, ValidationInterface } from "../interfaces.ts";

export const PluginName = "ServiceAccount";

/** The pod fields this plugin reads besides core.ts's. */
type Pod = CorePod & {
  spec: PodSpec & { automountServiceAccountToken?: boolean; imagePullSecrets?: { name?: string }[] };
};
export const DefaultServiceAccountName = "default";
export const DefaultAPITokenMountPath = "/var/run/secrets/kubernetes.io/serviceaccount";
export const ServiceAccountVolumeName = "kube-api-access";
/** The kubelet's annotation on a mirror pod. */
export const MirrorPodAnnotationKey = "kubernetes.io/config.mirror";

// #region token-volume
/** TokenVolumeSource: what in-cluster clients read (token, ca.crt, namespace). */
export function tokenVolume(name: string): Volume {
  return {
    name,
    projected: {
      defaultMode: 420,
      sources: [
        { serviceAccountToken: { expirationSeconds: 3607, path: "token" } },
        { configMap: { name: "kube-root-ca.crt", items: [{ key: "ca.crt", path: "ca.crt" }] } },
        {
          downwardAPI: {
            items: [{ path: "namespace", fieldRef: { apiVersion: "v1", fieldPath: "metadata.namespace" } }],
          },
        },
      ],
    },
  };
}
// #endregion token-volume

// #region automount
/** The pod's choice wins, then the account's; mounting is the default. */
export function shouldAutomount(sa: ServiceAccount, pod: Pod): boolean {
  if (typeof pod.spec.automountServiceAccountToken === "boolean")
    return pod.spec.automountServiceAccountToken;
  if (typeof sa.automountServiceAccountToken === "boolean") return sa.automountServiceAccountToken;
  return true;
}

/** mountServiceAccountToken: one volume, mounted read-only in every init and app container. */
export function mountServiceAccountToken(
  pod: Pod,
  newName = () => generateName(`${ServiceAccountVolumeName}-`),
): void {
  // A volume with no name is validation's to refuse (422), after admission: no 500 here
  // (found by testing/fuzz-secured.ts).
  const existing = (pod.spec.volumes ?? []).find((v) => v?.name?.startsWith(`${ServiceAccountVolumeName}-`));
  const volumeName = existing?.name ?? newName();
  let needsVolume = false;
  const mountIn = (containers: Container[] | undefined) => {
    for (const c of containers ?? []) {
      // Something already at the token path (a hand-made token mount) wins.
      if ((c.volumeMounts ?? []).some((m) => m.mountPath === DefaultAPITokenMountPath)) continue;
      c.volumeMounts = [
        ...(c.volumeMounts ?? []),
        { name: volumeName, readOnly: true, mountPath: DefaultAPITokenMountPath },
      ];
      needsVolume = true;
    }
  };
  mountIn(pod.spec.initContainers);
  mountIn(pod.spec.containers);
  if (!existing && needsVolume) pod.spec.volumes = [...(pod.spec.volumes ?? []), tokenVolume(volumeName)];
}
// #endregion automount

const isPodRequest = (a: Attributes) =>
  a.resource.group === "" && a.resource.resource === "pods" && !a.subresource && a.object !== undefined;

const isMirrorPod = (pod: KubeObject) => pod.metadata.annotations?.[MirrorPodAnnotationKey] !== undefined;

/** Does the pod name a secret anywhere (volumes, env, envFrom, image pull secrets)? */
function referencesSecrets(pod: Pod): boolean {
  if ((pod.spec.imagePullSecrets ?? []).length > 0) return true;
  for (const v of pod.spec.volumes ?? []) {
    if (v.secret) return true;
    const sources = (v.projected as { sources?: { secret?: unknown }[] } | undefined)?.sources ?? [];
    if (sources.some((s) => s.secret)) return true;
  }
  const containers = [...(pod.spec.initContainers ?? []), ...pod.spec.containers];
  return containers.some(
    (c) => (c.env ?? []).some((e) => e.valueFrom?.secretKeyRef) || (c.envFrom ?? []).some((e) => e.secretRef),
  );
}

// #region admit
export function newServiceAccount(ctx: PluginContext): MutationInterface & ValidationInterface {
  const accounts = (): Store | undefined => ctx.store("", "serviceaccounts");

  /** The account, or the Forbidden upstream answers when it cannot be found. */
  async function getServiceAccount(a: Attributes, name: string): Promise<ServiceAccount> {
    try {
      const store = accounts();
      if (!store) throw newNotFound({ group: "", resource: "serviceaccount" }, name);
      return (await store.get(a.namespace, name)) as ServiceAccount;
    } catch (e) {
      // Upstream's lister miss reads `serviceaccount "x" not found` (singular, as its NewNotFound names it).
      const why =
        isStatusError(e) && e.code === 404 ? `serviceaccount "${name}" not found` : (e as Error).message;
      throw newAdmissionForbidden(a, `error looking up service account ${a.namespace}/${name}: ${why}`);
    }
  }

  async function validate(a: Attributes): Promise<void> {
    if (!isPodRequest(a)) return;
    const pod = a.object as Pod;
    if (isMirrorPod(pod)) {
      if (pod.spec.serviceAccountName)
        throw newAdmissionForbidden(a, "a mirror pod may not reference service accounts");
      if (referencesSecrets(pod)) throw newAdmissionForbidden(a, "a mirror pod may not reference secrets");
      for (const v of pod.spec.volumes ?? []) {
        const sources = (v.projected as { sources?: { serviceAccountToken?: unknown }[] } | undefined)
          ?.sources;
        if (sources?.some((s) => s.serviceAccountToken)) {
          throw newAdmissionForbidden(a, "a mirror pod may not use ServiceAccountToken volume projections");
        }
      }
      return;
    }
    if (!pod.spec.serviceAccountName) {
      throw newAdmissionForbidden(
        a,
        `no service account specified for pod ${a.namespace}/${pod.metadata.name ?? ""}`,
      );
    }
    await getServiceAccount(a, pod.spec.serviceAccountName);
  }

  return {
    name: PluginName,
    handles: (op) => op === "CREATE",
    async admit(a) {
      if (!isPodRequest(a)) return;
      const pod = a.object as Pod;
      // The kubelet owns a mirror pod's spec: judge it, never change it.
      if (isMirrorPod(pod)) return validate(a);
      pod.spec.serviceAccountName ||= DefaultServiceAccountName;
      const sa = await getServiceAccount(a, pod.spec.serviceAccountName);
      if (shouldAutomount(sa, pod)) mountServiceAccountToken(pod);
      if ((pod.spec.imagePullSecrets ?? []).length === 0 && (sa.imagePullSecrets ?? []).length > 0) {
        pod.spec.imagePullSecrets = structuredClone(sa.imagePullSecrets);
      }
      return validate(a);
    },
    validate,
  };
}
// #endregion admit

/** The stand-in for the serviceaccounts controller: `default` in each given namespace. */
export async function ensureDefaultServiceAccounts(
  accounts: Store,
  namespaces: readonly string[],
): Promise<void> {
  for (const namespace of namespaces) {
    const sa: KubeObject = {
      apiVersion: "v1",
      kind: "ServiceAccount",
      metadata: { name: DefaultServiceAccountName },
    };
    await accounts.create(namespace, sa).catch((e) => {
      if (!(isStatusError(e) && e.code === 409)) throw e;
    });
  }
}
