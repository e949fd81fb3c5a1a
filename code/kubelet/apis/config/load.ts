/**
 * Loading `--config` — a KubeletConfiguration file (YAML or JSON) read, its kind checked,
 * decoded field by field and defaulted into the internal type.
 * Mirrors kubernetes/kubernetes pkg/kubelet/kubeletconfig/configfiles/configfiles.go.
 *
 * Solves:
 * - a fleet shares one file: the operator learns from one line what is wrong with it (the path
 *   that does not exist, the YAML line that does not parse, a string where a number goes, a
 *   duration without its unit);
 * - a field the kubelet does not know is not silently lost: the load returns it as a warning
 *   the command logs, in upstream's words (`Using lenient decoding as strict decoding failed`).
 *
 * Invariants:
 * - only `kubelet.config.k8s.io/v1beta1`, kind `KubeletConfiguration` decodes;
 * - a wrong type or a bad duration stops the load (KubeletConfigLoadError); an unknown field does
 *   not: upstream's kubelet tries strict decoding, and when only strictness failed it decodes
 *   again leniently and logs the strict error (pkg/kubelet/kubeletconfig/util/codec);
 * - loading does not validate: validation.ts does, after the flags are applied, as upstream's
 *   server.go validates the merged configuration.
 *
 * What upstream does differently: the scheme knows all of v1beta1; fields this course's kubelet
 * does not use (cgroupDriver, clusterDNS, …) are accepted and listed as ignored, not applied.
 * kube-scheduler's loader (code/scheduler/apis/config/load.ts) refuses unknown fields: its
 * v1 API dropped the lenient path, the kubelet's v1beta1 keeps it.
 *
 * @upstream kubernetes/kubernetes pkg/kubelet/kubeletconfig/configfiles/configfiles.go (fsLoader.Load)
 * @upstream kubernetes/kubernetes pkg/kubelet/kubeletconfig/util/codec/codec.go (DecodeKubeletConfiguration: strict, then lenient)
 * @upstream kubernetes/kubernetes cmd/kubelet/app/server.go (loadConfigFile: "failed to load kubelet config file")
 * @chapter 07-kubelet
 */
import { readFileSync } from "node:fs";
import { parse, parseDocument } from "yaml";
import { type KubeletConfigurationFields, setDefaults } from "./defaults.ts";
import { Kind, type KubeletConfiguration, SchemeGroupVersion } from "./types.ts";

/** A config file the kubelet cannot use. `message` is upstream's text; `line()` adds the fix. */
export class KubeletConfigLoadError extends Error {
  override readonly name = "KubeletConfigLoadError";
  constructor(
    message: string,
    readonly fix: string,
  ) {
    super(message);
  }
  line(): string {
    return `${this.message.replace(/\s*\n\s*/g, " ")} (fix: ${this.fix})`;
  }
}

export interface LoadedKubeletConfiguration {
  config: KubeletConfiguration;
  /** Lines to log: unknown fields (upstream's lenient decoding) and fields this kubelet ignores. */
  warnings: string[];
}

// #region schema
type Schema =
  | "string"
  | "bool"
  | "int32"
  | "duration"
  | "map"
  | "ignored"
  | { list: Schema; go: string }
  | { struct: string; fields: Record<string, Schema> };

const taint: Schema = {
  struct: "Taint",
  fields: { key: "string", value: "string", effect: "string", timeAdded: "string" },
};

/** v1beta1 fields a kubeadm-made file carries that this kubelet reads but does not act on. */
const ignoredFields = [
  "cgroupDriver",
  "cgroupsPerQOS",
  "clusterDNS",
  "clusterDomain",
  "cpuManagerReconcilePeriod",
  "enableServer",
  "evictionPressureTransitionPeriod",
  "failSwapOn",
  "featureGates",
  "httpCheckFrequency",
  "imageMinimumGCAge",
  "imageGCHighThresholdPercent",
  "imageGCLowThresholdPercent",
  "logging",
  "memorySwap",
  "resolvConf",
  "rotateCertificates",
  "runtimeRequestTimeout",
  "serializeImagePulls",
  "shutdownGracePeriod",
  "shutdownGracePeriodCriticalPods",
  "streamingConnectionIdleTimeout",
  "volumeStatsAggPeriod",
];

const configurationSchema: Schema = {
  struct: "KubeletConfiguration",
  fields: {
    apiVersion: "string",
    kind: "string",
    staticPodPath: "string",
    syncFrequency: "duration",
    fileCheckFrequency: "duration",
    nodeStatusUpdateFrequency: "duration",
    nodeStatusReportFrequency: "duration",
    nodeLeaseDurationSeconds: "int32",
    nodeStatusMaxImages: "int32",
    maxPods: "int32",
    address: "string",
    port: "int32",
    readOnlyPort: "int32",
    healthzBindAddress: "string",
    healthzPort: "int32",
    registerNode: "bool",
    registerWithTaints: { list: taint, go: "[]v1.Taint" },
    kubeReserved: "map",
    systemReserved: "map",
    evictionHard: "map",
    podCIDR: "string",
    tlsCertFile: "string",
    tlsPrivateKeyFile: "string",
    authentication: {
      struct: "KubeletAuthentication",
      fields: {
        x509: { struct: "KubeletX509Authentication", fields: { clientCAFile: "string" } },
        webhook: {
          struct: "KubeletWebhookAuthentication",
          fields: { enabled: "bool", cacheTTL: "duration" },
        },
        anonymous: { struct: "KubeletAnonymousAuthentication", fields: { enabled: "bool" } },
      },
    },
    authorization: {
      struct: "KubeletAuthorization",
      fields: {
        mode: "string",
        webhook: {
          struct: "KubeletWebhookAuthorization",
          fields: { cacheAuthorizedTTL: "duration", cacheUnauthorizedTTL: "duration" },
        },
      },
    },
    containerRuntimeEndpoint: "string",
    // chapter 8: component-base's TracingConfiguration.
    tracing: {
      struct: "TracingConfiguration",
      fields: { endpoint: "string", samplingRatePerMillion: "int32" },
    },
    ...Object.fromEntries(ignoredFields.map((f) => [f, "ignored" as const])),
  },
};
// #endregion schema

const unitMs: Record<string, number> = {
  ns: 1e-6,
  us: 1e-3,
  µs: 1e-3,
  ms: 1,
  s: 1000,
  m: 60_000,
  h: 3_600_000,
};

/**
 * Go's time.ParseDuration in milliseconds, or its error. (code/cmd/cli/duration.ts parses flags;
 * a component may not import code/cmd/.)
 */
export function parseGoDuration(text: string): number | Error {
  const m = /^([-+]?)((?:(?:\d+\.?\d*|\.\d+)[a-zµ]+)+|0)$/.exec(text);
  if (!m) {
    const missingUnit = /^[-+]?(\d+\.?\d*|\.\d+)$/.test(text);
    return new Error(`time: ${missingUnit ? "missing unit in" : "invalid"} duration ${JSON.stringify(text)}`);
  }
  let total = 0;
  for (const [, num, unit] of m[2].matchAll(/(\d+\.?\d*|\.\d+)([a-zµ]+)/g)) {
    if (unitMs[unit] === undefined)
      return new Error(`time: unknown unit ${JSON.stringify(unit)} in duration ${JSON.stringify(text)}`);
    total += Number(num) * unitMs[unit];
  }
  return Math.round((m[1] === "-" ? -1 : 1) * total) || 0;
}

/** Go's name for a JSON value's kind in an UnmarshalTypeError. */
const jsonKind = (v: unknown) =>
  typeof v === "string"
    ? "string"
    : typeof v === "boolean"
      ? "bool"
      : typeof v === "number"
        ? `number ${v}`
        : Array.isArray(v)
          ? "array"
          : "object";

interface Decoding {
  unknown: string[];
  ignored: string[];
}

/**
 * One value checked against its schema and converted to the internal form (durations become
 * `<name>Ms` numbers). Throws the message of Go's json decoder for a wrong type.
 */
function decode(v: unknown, s: Schema, path: string, field: string, d: Decoding): unknown {
  const typeError = (go: string) =>
    new KubeletConfigLoadError(
      `failed to decode: json: cannot unmarshal ${jsonKind(v)} into Go struct field ${field} of type ${go}`,
      "give the field a value of the type named (durations as strings: 10s, 1m30s)",
    );
  if (v === null || v === undefined) return undefined;
  if (s === "ignored") {
    d.ignored.push(path);
    return undefined;
  }
  if (s === "string" || s === "bool") {
    if (typeof v !== (s === "string" ? "string" : "boolean")) throw typeError(s);
    return v;
  }
  if (s === "int32") {
    if (typeof v !== "number" || !Number.isInteger(v) || v < -(2 ** 31) || v >= 2 ** 31) throw typeError(s);
    return v;
  }
  if (s === "duration") {
    // metav1.Duration unmarshals a string, then time.ParseDuration.
    if (typeof v !== "string") throw typeError("string");
    const ms = parseGoDuration(v);
    if (ms instanceof Error)
      throw new KubeletConfigLoadError(
        `failed to decode: ${ms.message}`,
        "write durations with a unit: 10s, 1m30s, 500ms",
      );
    return ms;
  }
  if (s === "map") {
    if (typeof v !== "object" || Array.isArray(v)) throw typeError("map[string]string");
    for (const [k, item] of Object.entries(v as Record<string, unknown>)) {
      if (typeof item !== "string") {
        throw new KubeletConfigLoadError(
          `failed to decode: json: cannot unmarshal ${jsonKind(item)} into Go struct field ${field}.${k} of type string`,
          'quote the value: "100Mi", "10%"',
        );
      }
    }
    return { ...(v as Record<string, string>) };
  }
  if ("list" in s) {
    if (!Array.isArray(v)) throw typeError(s.go);
    return v.map((item, i) => decode(item ?? {}, s.list, `${path}[${i}]`, field, d));
  }
  if (typeof v !== "object" || Array.isArray(v)) throw typeError(`v1beta1.${s.struct}`);
  const out: Record<string, unknown> = {};
  for (const [k, child] of Object.entries(v as Record<string, unknown>)) {
    const childPath = path ? `${path}.${k}` : k;
    const fs = s.fields[k];
    if (!fs) {
      d.unknown.push(childPath);
      continue;
    }
    const value = decode(child, fs, childPath, `${s.struct}.${k}`, d);
    if (value !== undefined) out[fs === "duration" ? `${k}Ms` : k] = value;
  }
  return out;
}

// #region load-config
/** loadConfigFile: read, decode (leniently), default. */
export function loadKubeletConfigFile(path: string): LoadedKubeletConfiguration {
  let data: string;
  try {
    data = readFileSync(path, "utf8");
  } catch (e) {
    const err = e as NodeJS.ErrnoException;
    const reason =
      err.code === "ENOENT"
        ? "no such file or directory"
        : err.code === "EACCES"
          ? "permission denied"
          : err.code === "EISDIR"
            ? "is a directory"
            : err.message;
    throw new KubeletConfigLoadError(
      `failed to read kubelet config file ${JSON.stringify(path)}, error: ${err.code === "EISDIR" ? "read" : "open"} ${path}: ${reason}`,
      "check the --config path: it must name a readable file",
    );
  }
  if (data.length === 0) {
    throw new KubeletConfigLoadError(
      `kubelet config file ${JSON.stringify(path)} was empty`,
      `write at least apiVersion: ${SchemeGroupVersion} and kind: ${Kind}`,
    );
  }
  return loadKubeletConfig(data);
}

/** DecodeKubeletConfiguration: the file's text to the defaulted internal type. */
export function loadKubeletConfig(data: string): LoadedKubeletConfiguration {
  // sigs.k8s.io/yaml reads YAML 1.1 (`on`/`off` are booleans).
  const document = parseDocument(data, { uniqueKeys: false, version: "1.1" });
  const syntax = document.errors[0];
  if (syntax) {
    const what = syntax.message.split("\n")[0].replace(/ at line \d+, column \d+:?$/, "");
    const line = syntax.linePos ? `line ${syntax.linePos[0].line}: ` : "";
    throw new KubeletConfigLoadError(
      `failed to decode: error converting YAML to JSON: yaml: ${line}${what}`,
      "the file is not valid YAML: fix the syntax at that line (indentation, a missing ':' or quote)",
    );
  }
  const doc = parse(data, { version: "1.1" }) as unknown;
  const want = `set apiVersion: ${SchemeGroupVersion} and kind: ${Kind}`;
  if (doc === null || typeof doc !== "object" || Array.isArray(doc)) {
    throw new KubeletConfigLoadError(
      "failed to decode: couldn't get version/kind; json parse error: the file is not a mapping",
      want,
    );
  }
  const obj = doc as Record<string, unknown>;
  const apiVersion = typeof obj.apiVersion === "string" ? obj.apiVersion : "";
  const kind = typeof obj.kind === "string" ? obj.kind : "";
  if (kind === "")
    throw new KubeletConfigLoadError(`failed to decode: Object 'Kind' is missing in '${data}'`, want);
  if (apiVersion === "")
    throw new KubeletConfigLoadError(`failed to decode: Object 'apiVersion' is missing in '${data}'`, want);
  if (apiVersion !== SchemeGroupVersion || kind !== Kind) {
    // Upstream's scheme name also carries the line of its NewScheme call.
    throw new KubeletConfigLoadError(
      `failed to decode: no kind ${JSON.stringify(kind)} is registered for version ${JSON.stringify(apiVersion)} in scheme "pkg/kubelet/apis/config/scheme/scheme.go"`,
      want,
    );
  }
  const d: Decoding = { unknown: [], ignored: [] };
  const fields = decode(
    obj,
    configurationSchema,
    "",
    "KubeletConfiguration",
    d,
  ) as KubeletConfigurationFields & {
    apiVersion?: string;
    kind?: string;
  };
  const { apiVersion: _v, kind: _k, ...rest } = fields;
  const warnings: string[] = [];
  if (d.unknown.length > 0) {
    const strict = d.unknown.map((p) => `unknown field ${JSON.stringify(p)}`).join(", ");
    warnings.push(`Using lenient decoding as strict decoding failed: strict decoding error: ${strict}`);
  }
  if (d.ignored.length > 0) {
    warnings.push(
      `kubelet.config.k8s.io/v1beta1 fields this course's kubelet does not use, ignored: ${d.ignored.join(", ")}`,
    );
  }
  return { config: setDefaults(rest), warnings };
}
// #endregion load-config
