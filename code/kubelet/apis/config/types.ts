/**
 * KubeletConfiguration — what a kubelet was asked to do that may be shared between nodes: how
 * often it syncs and reports, where it serves, what it reserves, how it registers its Node.
 * Mirrors kubernetes/kubernetes pkg/kubelet/apis/config/types.go.
 *
 * Solves:
 * - one typed value for the fields this course's kubelet uses, whether they came from
 *   `--config` (kubelet.config.k8s.io/v1beta1), from flags, or from the defaults;
 * - the split upstream makes between KubeletConfiguration (shareable between nodes: a fleet uses
 *   one file) and KubeletFlags (per node: hostname, node IP, root dir, node labels), which
 *   cmd/cli/kubelet-flags.ts keeps.
 *
 * Invariants:
 * - this is the internal type: every field is set (defaults applied); durations are numbers of
 *   milliseconds, named `…Ms`; the file's shape (`1m0s` strings, pointers) lives only in load.ts;
 * - the maps keep upstream's string form (`kubeReserved: {cpu: "200m"}`, `evictionHard:
 *   {"memory.available": "100Mi"}`): they are parsed where they are used, as upstream's
 *   server.go parses them (parseResourceList, eviction.ParseThresholdConfig).
 *
 * What upstream does differently: the real type has about a hundred fields (cgroups, CPU and
 * memory managers, image GC, logging, tracing…); only those a course kubelet acts on are here.
 *
 * @upstream kubernetes/kubernetes pkg/kubelet/apis/config/types.go (KubeletConfiguration, KubeletAuthentication, KubeletAuthorization, KubeletAuthorizationMode)
 * @upstream kubernetes/kubernetes staging/src/k8s.io/kubelet/config/v1beta1/types.go (KubeletConfiguration: the file's field names)
 * @chapter 07-kubelet
 */

import type { Taint } from "../../../api/core.ts";
import type { TracingConfiguration } from "../../../tracing/config.ts";

export const GroupName = "kubelet.config.k8s.io";
export const SchemeGroupVersion = `${GroupName}/v1beta1`;
export const Kind = "KubeletConfiguration";

/** pkg/cluster/ports: the kubelet's HTTPS port, and the read-only HTTP port the legacy defaults open. */
export const KubeletPort = 10250;
export const KubeletReadOnlyPort = 10255;

/** AlwaysAllow: every request to the kubelet server passes; Webhook: a SubjectAccessReview decides. */
export type KubeletAuthorizationMode = "AlwaysAllow" | "Webhook";

// #region kubelet-configuration
export interface KubeletConfiguration {
  /** --pod-manifest-path: the static pods' directory (or single file); "" = none. */
  staticPodPath: string;
  /** --sync-frequency: the longest a running pod goes without a sync (1m). */
  syncFrequencyMs: number;
  /** --file-check-frequency: how often staticPodPath is re-read (20s). */
  fileCheckFrequencyMs: number;
  /** --node-status-update-frequency: how often the node status is computed (10s). */
  nodeStatusUpdateFrequencyMs: number;
  /** Config file only: the longest an unchanged status goes unposted (5m, see defaults.ts). */
  nodeStatusReportFrequencyMs: number;
  /** Config file only: the node Lease's duration; renewed every quarter of it (40). */
  nodeLeaseDurationSeconds: number;
  /** Config file only: how many images the node status lists (50; -1: all). */
  nodeStatusMaxImages: number;
  /** --max-pods (110). */
  maxPods: number;
  /** --address, --port: where the kubelet server listens (0.0.0.0:10250). */
  address: string;
  port: number;
  /** --read-only-port: the unauthenticated HTTP port; 0 disables it. */
  readOnlyPort: number;
  /** --healthz-bind-address, --healthz-port: the plain-HTTP /healthz (127.0.0.1:10248; port 0 disables). */
  healthzBindAddress: string;
  healthzPort: number;
  /** --register-node: create the Node object at start (true). */
  registerNode: boolean;
  /** --register-with-taints: the taints the Node is created with. */
  registerWithTaints: Taint[];
  /** --kube-reserved, --system-reserved: `resource name → quantity`, kept back from allocatable. */
  kubeReserved: Record<string, string>;
  systemReserved: Record<string, string>;
  /** --eviction-hard: `signal → threshold` (`100Mi`, `10%`). */
  evictionHard: Record<string, string>;
  /** --pod-cidr: pod IPs come from here (upstream: standalone mode only; see kubelet-flags.ts). */
  podCIDR: string;
  /** --tls-cert-file, --tls-private-key-file: the server's certificate; "" = self-signed in --cert-dir. */
  tlsCertFile: string;
  tlsPrivateKeyFile: string;
  authentication: {
    /** --client-ca-file: client certificates signed by it authenticate as their CommonName. */
    x509: { clientCAFile: string };
    /** --authentication-token-webhook: bearer tokens checked with a TokenReview. */
    webhook: { enabled: boolean; cacheTTLMs: number };
    /** --anonymous-auth: requests no authenticator claims are system:anonymous. */
    anonymous: { enabled: boolean };
  };
  authorization: {
    /** --authorization-mode. */
    mode: KubeletAuthorizationMode | string;
    webhook: { cacheAuthorizedTTLMs: number; cacheUnauthorizedTTLMs: number };
  };
  /** --container-runtime-endpoint: the CRI socket (this course's runtimes run in process: --runtime). */
  containerRuntimeEndpoint: string;
  /**
   * chapter 8: `tracing` — where spans go and the sampling rate (component-base's
   * TracingConfiguration; the KubeletTracing gate is on by default since 1.28). Absent: no tracing.
   */
  tracing?: TracingConfiguration;
}
// #endregion kubelet-configuration
