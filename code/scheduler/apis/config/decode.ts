/**
 * Strict decoding — the file's fields checked against the v1 types the way kube-scheduler's
 * strict decoder checks them: an unknown field, a string where a number goes, a bad duration.
 *
 * @upstream kubernetes/kubernetes staging/src/k8s.io/apimachinery/pkg/runtime/serializer/json/json.go (Serializer.Decode, unmarshal: strict errors)
 * @upstream kubernetes/kubernetes staging/src/k8s.io/apimachinery/pkg/runtime/error.go (NewStrictDecodingError)
 * @upstream kubernetes-sigs/json internal/golang/encoding/json/decode.go (unknown field paths, UnmarshalTypeError)
 * @upstream kubernetes/kubernetes staging/src/k8s.io/kube-scheduler/config/v1/types.go (DecodeNestedObjects, PluginConfig.decodeNestedObjects)
 * @chapter 05-scheduler
 *
 * Solves: a typo in a config file (`percentageOfNodeToScore`) must stop the scheduler with the
 * field's name, not be ignored so that the scheduler silently runs with the default.
 *
 * Invariants:
 * - unknown fields are all collected (`strict decoding error: unknown field "a", unknown field
 *   "profiles[0].b"`), paths as sigs.k8s.io/json prints them; a wrong type stops at the first,
 *   with Go's `json: cannot unmarshal …` text.
 * - a pluginConfig's args are decoded by their own kind (`<name>Args`); their unknown fields are
 *   reported under `decoding .profiles[i].pluginConfig[j]: … decoding args for plugin <name>`;
 *   args of a plugin without an args kind are not looked into.
 */
import { extensionPoints } from "../../framework/runtime/registry.ts";
import type { KubeSchedulerConfigurationV1 } from "./types.ts";

// #region schemas
/** A field's Go type: its name (for error text) and what JSON it takes. */
type Schema =
  | { kind: "scalar"; go: "string" | "bool" | "int32" | "int64" | "float32" }
  | { kind: "duration" }
  | { kind: "any" }
  | { kind: "list"; go: string; of: Schema }
  | { kind: "struct"; go: string; pkg: string; fields: Record<string, Schema> };

const str: Schema = { kind: "scalar", go: "string" };
const bool: Schema = { kind: "scalar", go: "bool" };
const int32: Schema = { kind: "scalar", go: "int32" };
const int64: Schema = { kind: "scalar", go: "int64" };
const float32: Schema = { kind: "scalar", go: "float32" };
const duration: Schema = { kind: "duration" };
const any: Schema = { kind: "any" };
const listOf = (of: Schema, go: string): Schema => ({ kind: "list", go, of });
/** `pkg` is the Go package the type lives in, as its type name prints (`v1alpha1.LeaderElectionConfiguration`). */
const struct = (go: string, fields: Record<string, Schema>, pkg = "v1"): Schema => ({
  kind: "struct",
  go,
  pkg,
  fields,
});
const typeMeta = { apiVersion: str, kind: str };

const plugin = struct("Plugin", { name: str, weight: int32 });
const pluginSet = struct("PluginSet", {
  enabled: listOf(plugin, "[]v1.Plugin"),
  disabled: listOf(plugin, "[]v1.Plugin"),
});
// v1.Plugins' fields in their declared order: every extension point, then multiPoint.
const pluginPoints = [...extensionPoints, "multiPoint"];
const plugins = struct("Plugins", Object.fromEntries(pluginPoints.map((p) => [p, pluginSet])));
const profile = struct("KubeSchedulerProfile", {
  schedulerName: str,
  percentageOfNodesToScore: int32,
  plugins,
  // args is a RawExtension: decoded separately, by its kind.
  pluginConfig: listOf(struct("PluginConfig", { name: str, args: any }), "[]v1.PluginConfig"),
});
const extender = struct("Extender", {
  urlPrefix: str,
  filterVerb: str,
  preemptVerb: str,
  prioritizeVerb: str,
  weight: int64,
  bindVerb: str,
  enableHTTPS: bool,
  tlsConfig: any,
  httpTimeout: duration,
  nodeCacheCapable: bool,
  managedResources: any,
  ignorable: bool,
});

export const configurationSchema = struct("KubeSchedulerConfiguration", {
  ...typeMeta,
  parallelism: int32,
  leaderElection: struct(
    "LeaderElectionConfiguration",
    {
      leaderElect: bool,
      leaseDuration: duration,
      renewDeadline: duration,
      retryPeriod: duration,
      resourceLock: str,
      resourceName: str,
      resourceNamespace: str,
    },
    "v1alpha1",
  ),
  clientConnection: struct(
    "ClientConnectionConfiguration",
    { kubeconfig: str, acceptContentTypes: str, contentType: str, qps: float32, burst: int32 },
    "v1alpha1",
  ),
  enableProfiling: bool,
  enableContentionProfiling: bool,
  percentageOfNodesToScore: int32,
  podInitialBackoffSeconds: int64,
  podMaxBackoffSeconds: int64,
  profiles: listOf(profile, "[]v1.KubeSchedulerProfile"),
  extenders: listOf(extender, "[]v1.Extender"),
  delayCacheUntilActive: bool,
});

const resourceSpec = struct("ResourceSpec", { name: str, weight: int64 });
const resources = listOf(resourceSpec, "[]v1.ResourceSpec");
const strings = listOf(str, "[]string");

/** The args kinds of kubescheduler.config.k8s.io/v1 that our plugins use (VolumeBindingArgs: no volume plugins). */
export const argsSchemas: Record<string, Schema> = {
  DefaultPreemption: struct("DefaultPreemptionArgs", {
    ...typeMeta,
    minCandidateNodesPercentage: int32,
    minCandidateNodesAbsolute: int32,
  }),
  InterPodAffinity: struct("InterPodAffinityArgs", {
    ...typeMeta,
    hardPodAffinityWeight: int32,
    ignorePreferredTermsOfExistingPods: bool,
  }),
  NodeAffinity: struct("NodeAffinityArgs", { ...typeMeta, addedAffinity: any }),
  NodeResourcesBalancedAllocation: struct("NodeResourcesBalancedAllocationArgs", { ...typeMeta, resources }),
  NodeResourcesFit: struct("NodeResourcesFitArgs", {
    ...typeMeta,
    ignoredResources: strings,
    ignoredResourceGroups: strings,
    scoringStrategy: struct("ScoringStrategy", {
      type: str,
      resources,
      requestedToCapacityRatio: struct("RequestedToCapacityRatioParam", {
        shape: listOf(
          struct("UtilizationShapePoint", { utilization: int32, score: int32 }),
          "[]v1.UtilizationShapePoint",
        ),
      }),
    }),
  }),
  PodTopologySpread: struct("PodTopologySpreadArgs", {
    ...typeMeta,
    defaultConstraints: any,
    defaultingType: str,
  }),
};
// #endregion schemas

/** A decoding failure that is not a strict one (a wrong type, a bad duration): decoding stops. */
export class DecodeError extends Error {
  override readonly name = "DecodeError";
}

// #region strict-walk
interface Walk {
  unknown: string[];
  /** Durations found, by path, parsed to milliseconds. */
  durations: Map<string, number>;
}

/** Go's name for a JSON value's kind in UnmarshalTypeError ("string", "number 1.5", "object"…). */
function jsonKind(v: unknown): string {
  if (typeof v === "string") return "string";
  if (typeof v === "boolean") return "bool";
  if (typeof v === "number") return `number ${v}`;
  if (Array.isArray(v)) return "array";
  return "object";
}

/** An int32 field takes −2³¹ … 2³¹−1; Go refuses a larger number as it would a string. */
function fitsInt(v: number, go: string): boolean {
  return go !== "int32" || (v >= -(2 ** 31) && v < 2 ** 31);
}

function typeError(v: unknown, structName: string, fieldStack: string[], go: string): DecodeError {
  return new DecodeError(
    `json: cannot unmarshal ${jsonKind(v)} into Go struct field ${structName}.${fieldStack.join(".")} of type ${go}`,
  );
}

function walk(
  v: unknown,
  s: Schema,
  path: string,
  structName: string,
  fieldStack: string[],
  out: Walk,
): void {
  if (v === null || v === undefined || s.kind === "any") return;
  switch (s.kind) {
    case "scalar": {
      const ok =
        s.go === "string"
          ? typeof v === "string"
          : s.go === "bool"
            ? typeof v === "boolean"
            : typeof v === "number" && (s.go === "float32" || (Number.isInteger(v) && fitsInt(v, s.go)));
      if (!ok) throw typeError(v, structName, fieldStack, s.go);
      return;
    }
    case "duration": {
      // metav1.Duration unmarshals a string, then time.ParseDuration; its error comes out bare.
      if (typeof v !== "string")
        throw new DecodeError(
          `json: cannot unmarshal ${jsonKind(v).split(" ")[0]} into Go value of type string`,
        );
      const ms = parseGoDuration(v);
      if (ms instanceof DecodeError) throw ms;
      out.durations.set(path, ms);
      return;
    }
    case "list":
      if (!Array.isArray(v)) throw typeError(v, structName, fieldStack, s.go);
      for (const [i, item] of v.entries()) {
        // Go decodes a null element of a struct list as the zero struct, not as nothing.
        if (item === null && s.of.kind === "struct") v[i] = {};
        walk(v[i], s.of, `${path}[${i}]`, structName, fieldStack, out);
      }
      return;
    case "struct":
      if (typeof v !== "object" || Array.isArray(v)) {
        throw typeError(v, structName, fieldStack, `${s.pkg}.${s.go}`);
      }
      for (const [k, child] of Object.entries(v as Record<string, unknown>)) {
        const childPath = path ? `${path}.${k}` : k;
        const fs = s.fields[k];
        if (!fs) out.unknown.push(childPath);
        else walk(child, fs, childPath, s.go, [...fieldStack, k], out);
      }
  }
}
// #endregion strict-walk

const durationUnitMs: Record<string, number> = {
  ns: 1e-6,
  us: 1e-3,
  µs: 1e-3,
  μs: 1e-3,
  ms: 1,
  s: 1000,
  m: 60_000,
  h: 3_600_000,
};

/**
 * Go's time.ParseDuration, in milliseconds. code/cmd/cli/duration.ts has the same for flags;
 * components may not import code/cmd/, so the scheduler keeps this small copy.
 */
export function parseGoDuration(text: string): number | DecodeError {
  const m = /^([-+]?)((?:(?:\d+\.?\d*|\.\d+)[a-zµμ]+)+|0)$/.exec(text);
  if (!m) {
    const missingUnit = /^[-+]?(\d+\.?\d*|\.\d+)$/.test(text);
    return new DecodeError(
      `time: ${missingUnit ? "missing unit in" : "invalid"} duration ${JSON.stringify(text)}`,
    );
  }
  let total = 0;
  for (const [, num, unit] of m[2]!.matchAll(/(\d+\.?\d*|\.\d+)([a-zµμ]+)/g)) {
    const ms = durationUnitMs[unit!];
    if (ms === undefined) {
      return new DecodeError(
        `time: unknown unit ${JSON.stringify(unit)} in duration ${JSON.stringify(text)}`,
      );
    }
    total += Number(num) * ms;
  }
  return Math.round((m[1] === "-" ? -1 : 1) * total) || 0;
}

// #region decode-configuration
export interface Decoded {
  config: KubeSchedulerConfigurationV1;
  /** leaderElection durations in milliseconds. */
  durationsMs: { leaseDuration?: number; renewDeadline?: number; retryPeriod?: number };
  /** The strict errors (unknown fields), each as upstream words it; empty when the file is clean. */
  strict: string[];
}

/** The v1 object checked field by field; throws DecodeError for a wrong type. */
export function decodeConfiguration(obj: Record<string, unknown>): Decoded {
  const top: Walk = { unknown: [], durations: new Map() };
  walk(obj, configurationSchema, "", "KubeSchedulerConfiguration", [], top);
  const strict: string[] = top.unknown.map((p) => `unknown field ${JSON.stringify(p)}`);
  const config = obj as KubeSchedulerConfigurationV1;
  (config.profiles ?? []).forEach((prof, i) => {
    (prof.pluginConfig ?? []).forEach((pc, j) => {
      const schema = argsSchemas[pc.name];
      if (!schema || pc.args === undefined || pc.args === null) return;
      const at = `decoding .profiles[${i}].pluginConfig[${j}]`;
      const args: Walk = { unknown: [], durations: new Map() };
      try {
        walk(pc.args, schema, "", (schema as { go: string }).go, [], args);
      } catch (e) {
        throw new DecodeError(`${at}: decoding args for plugin ${pc.name}: ${(e as Error).message}`);
      }
      if (args.unknown.length > 0) {
        const inner = args.unknown.map((p) => `unknown field ${JSON.stringify(p)}`).join(", ");
        strict.push(
          `${at}: strict decoding error: decoding args for plugin ${pc.name}: strict decoding error: ${inner}`,
        );
      }
      // The args' own TypeMeta is not part of the plugin's args.
      const { apiVersion: _v, kind: _k, ...rest } = pc.args as Record<string, unknown>;
      pc.args = rest;
    });
  });
  return {
    config,
    durationsMs: {
      leaseDuration: top.durations.get("leaderElection.leaseDuration"),
      renewDeadline: top.durations.get("leaderElection.renewDeadline"),
      retryPeriod: top.durations.get("leaderElection.retryPeriod"),
    },
    strict,
  };
}
// #endregion decode-configuration
