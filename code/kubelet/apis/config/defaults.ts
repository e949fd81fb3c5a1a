/**
 * Defaults — the values a kubelet uses for what neither its `--config` file nor its flags said,
 * and the one place they differ between the two: the "legacy" defaults a kubelet started with
 * flags only keeps for backward compatibility.
 * Mirrors kubernetes/kubernetes pkg/kubelet/apis/config/v1beta1/defaults.go.
 *
 * Solves:
 * - a file that sets three fields is a whole configuration: every other field gets upstream's
 *   default (SetDefaults_KubeletConfiguration), so a field left out and a field written as its
 *   zero value (`port: 0`, `syncFrequency: 0s`) both mean "the default", as in Go;
 * - nodeStatusReportFrequency follows nodeStatusUpdateFrequency when a file sets only the latter
 *   (a kubelet configured before Leases existed keeps posting its status every period);
 * - a kubelet started without `--config` keeps the pre-file defaults of its flags
 *   (applyLegacyDefaults): anonymous requests allowed, no token webhook, authorization
 *   AlwaysAllow, the read-only port 10255 open. A file gets the secure ones: Webhook, no
 *   anonymous, read-only port 0.
 *
 * Invariants:
 * - `defaultConfiguration()` is SetDefaults of an empty file; `legacyDefaultConfiguration()` is
 *   what NewKubeletConfiguration returns (the base flags are parsed onto without `--config`);
 * - "unset" is what Go's zero value would be: absent, or 0 / "" / 0s for non-pointer fields;
 *   for upstream's pointer fields (healthzPort, registerNode, nodeStatusMaxImages, the
 *   authentication switches) only absence is unset — `healthzPort: 0` disables /healthz.
 *
 * @upstream kubernetes/kubernetes pkg/kubelet/apis/config/v1beta1/defaults.go (SetDefaults_KubeletConfiguration)
 * @upstream kubernetes/kubernetes pkg/kubelet/eviction/defaults_linux.go (DefaultEvictionHard)
 * @upstream kubernetes/kubernetes cmd/kubelet/app/server.go (loadConfigFile: EvictionHard nil → DefaultEvictionHard)
 * @upstream kubernetes/kubernetes cmd/kubelet/app/options/options.go (NewKubeletConfiguration, applyLegacyDefaults)
 * @chapter 07-kubelet
 */
import type { Taint } from "../../../api/core.ts";
import { type KubeletConfiguration, KubeletPort, KubeletReadOnlyPort } from "./types.ts";

/**
 * The Linux hard eviction thresholds a kubelet uses when none are configured (upstream keeps
 * them in the eviction package and applies them when loading, as they differ by OS).
 */
export const DefaultEvictionHard: Readonly<Record<string, string>> = {
  "memory.available": "100Mi",
  "nodefs.available": "10%",
  "nodefs.inodesFree": "5%",
  "imagefs.available": "15%",
};

/** The file's fields after decoding, in internal units; absent = not written. */
export interface KubeletConfigurationFields {
  staticPodPath?: string;
  syncFrequencyMs?: number;
  fileCheckFrequencyMs?: number;
  nodeStatusUpdateFrequencyMs?: number;
  nodeStatusReportFrequencyMs?: number;
  nodeLeaseDurationSeconds?: number;
  nodeStatusMaxImages?: number;
  maxPods?: number;
  address?: string;
  port?: number;
  readOnlyPort?: number;
  healthzBindAddress?: string;
  healthzPort?: number;
  registerNode?: boolean;
  registerWithTaints?: Taint[];
  kubeReserved?: Record<string, string>;
  systemReserved?: Record<string, string>;
  evictionHard?: Record<string, string>;
  podCIDR?: string;
  tlsCertFile?: string;
  tlsPrivateKeyFile?: string;
  authentication?: {
    x509?: { clientCAFile?: string };
    webhook?: { enabled?: boolean; cacheTTLMs?: number };
    anonymous?: { enabled?: boolean };
  };
  authorization?: {
    mode?: string;
    webhook?: { cacheAuthorizedTTLMs?: number; cacheUnauthorizedTTLMs?: number };
  };
  containerRuntimeEndpoint?: string;
  /** chapter 8 */
  tracing?: { endpoint?: string; samplingRatePerMillion?: number };
}

// #region kubelet-config-defaults
/** Go's `if obj.X == zero { obj.X = d }` for a non-pointer field. */
const orDefault = <T>(v: T | undefined, zero: T, d: T): T => (v === undefined || v === zero ? d : v);

/** SetDefaults_KubeletConfiguration: the decoded file with every unset field defaulted. */
export function setDefaults(f: KubeletConfigurationFields): KubeletConfiguration {
  const update = f.nodeStatusUpdateFrequencyMs ?? 0;
  const report = f.nodeStatusReportFrequencyMs ?? 0;
  return {
    staticPodPath: f.staticPodPath ?? "",
    syncFrequencyMs: orDefault(f.syncFrequencyMs, 0, 60_000),
    fileCheckFrequencyMs: orDefault(f.fileCheckFrequencyMs, 0, 20_000),
    // The report frequency is defaulted first, from the update frequency as the file wrote it:
    // a file that sets only nodeStatusUpdateFrequency posts its status every update.
    nodeStatusReportFrequencyMs: report !== 0 ? report : update !== 0 ? update : 5 * 60_000,
    nodeStatusUpdateFrequencyMs: update !== 0 ? update : 10_000,
    nodeLeaseDurationSeconds: orDefault(f.nodeLeaseDurationSeconds, 0, 40),
    nodeStatusMaxImages: f.nodeStatusMaxImages ?? 50,
    maxPods: orDefault(f.maxPods, 0, 110),
    address: orDefault(f.address, "", "0.0.0.0"),
    port: orDefault(f.port, 0, KubeletPort),
    readOnlyPort: f.readOnlyPort ?? 0,
    healthzBindAddress: orDefault(f.healthzBindAddress, "", "127.0.0.1"),
    healthzPort: f.healthzPort ?? 10248,
    registerNode: f.registerNode ?? true,
    registerWithTaints: f.registerWithTaints ?? [],
    kubeReserved: f.kubeReserved ?? {},
    systemReserved: f.systemReserved ?? {},
    // A file's evictionHard replaces the defaults whole: the signals it leaves out are not watched.
    evictionHard: f.evictionHard ?? { ...DefaultEvictionHard },
    podCIDR: f.podCIDR ?? "",
    tlsCertFile: f.tlsCertFile ?? "",
    tlsPrivateKeyFile: f.tlsPrivateKeyFile ?? "",
    authentication: {
      x509: { clientCAFile: f.authentication?.x509?.clientCAFile ?? "" },
      webhook: {
        enabled: f.authentication?.webhook?.enabled ?? true,
        cacheTTLMs: orDefault(f.authentication?.webhook?.cacheTTLMs, 0, 2 * 60_000),
      },
      anonymous: { enabled: f.authentication?.anonymous?.enabled ?? false },
    },
    authorization: {
      mode: orDefault(f.authorization?.mode, "", "Webhook"),
      webhook: {
        cacheAuthorizedTTLMs: orDefault(f.authorization?.webhook?.cacheAuthorizedTTLMs, 0, 5 * 60_000),
        cacheUnauthorizedTTLMs: orDefault(f.authorization?.webhook?.cacheUnauthorizedTTLMs, 0, 30_000),
      },
    },
    containerRuntimeEndpoint: orDefault(
      f.containerRuntimeEndpoint,
      "",
      "unix:///run/containerd/containerd.sock",
    ),
    // chapter 8: a pointer upstream, not defaulted — absent stays absent (no tracing).
    ...(f.tracing ? { tracing: { ...f.tracing } } : {}),
  };
}

/** The defaults of a file that says nothing. */
export function defaultConfiguration(): KubeletConfiguration {
  return setDefaults({});
}

/**
 * NewKubeletConfiguration: the defaults, then applyLegacyDefaults — what a kubelet started with
 * flags only runs with (the flags keep their pre-`--config` meaning).
 */
export function legacyDefaultConfiguration(): KubeletConfiguration {
  const c = defaultConfiguration();
  c.authentication.anonymous.enabled = true;
  c.authentication.webhook.enabled = false;
  c.authorization.mode = "AlwaysAllow";
  c.readOnlyPort = KubeletReadOnlyPort;
  return c;
}
// #endregion kubelet-config-defaults
