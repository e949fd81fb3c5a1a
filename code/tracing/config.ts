/**
 * TracingConfiguration — where a component sends its spans and how many traces it starts, as
 * component-base's tracing API types it, read from `--tracing-config-file` or the kubelet's
 * KubeletConfiguration `tracing` field.
 *
 * Solves:
 * - one shape for every component: the API server reads it from its own file
 *   (`apiserver.config.k8s.io/v1beta1`, kind TracingConfiguration), the kubelet from a field of
 *   its configuration, and this course's scheduler and controller-manager from the same file as
 *   the API server (upstream 1.32 gives them no tracing at all);
 * - a bad file is refused at start, with upstream's field errors, rather than a component that
 *   silently records nothing.
 *
 * Invariants:
 * - `samplingRatePerMillion` absent means 0: a component starts no trace of its own and records
 *   only the spans whose parent (an incoming `traceparent`) was sampled — upstream's default;
 * - `endpoint` absent means `localhost:4318`.
 *
 * What upstream does differently: its exporter speaks OTLP over gRPC, default endpoint
 * `localhost:4317`, and refuses an endpoint with an `http://` scheme (gRPC naming: none, dns,
 * unix, unix-abstract). Ours speaks OTLP over HTTP (JSON), so its default is OTLP/HTTP's port
 * 4318 and it takes `host:port` or an `http(s)://` URL; a bare `host:port` becomes
 * `http://host:port/v1/traces`.
 *
 * @upstream kubernetes/kubernetes staging/src/k8s.io/component-base/tracing/api/v1/types.go (TracingConfiguration)
 * @upstream kubernetes/kubernetes staging/src/k8s.io/component-base/tracing/api/v1/config.go (ValidateTracingConfiguration)
 * @upstream kubernetes/kubernetes staging/src/k8s.io/apiserver/pkg/apis/apiserver/types.go (TracingConfiguration)
 * @upstream kubernetes/kubernetes staging/src/k8s.io/apiserver/pkg/server/options/tracing.go (ReadTracingConfiguration)
 * @chapter 08-cluster
 */
import { readFileSync } from "node:fs";
import { parse } from "yaml";

export interface TracingConfiguration {
  /** The collector: `host:port` (OTLP/HTTP at `/v1/traces`) or a full `http(s)://` URL. */
  endpoint?: string;
  /** How many of a million traces this component starts itself; 0 (default): only sampled parents. */
  samplingRatePerMillion?: number;
}

export const defaultEndpoint = "localhost:4318";
const maxSamplingRatePerMillion = 1_000_000;

/** The API server's file kinds: v1alpha1 and v1beta1 (1.32 has no v1 of it). */
const apiVersions = ["apiserver.config.k8s.io/v1alpha1", "apiserver.config.k8s.io/v1beta1"];

export class TracingConfigError extends Error {}

// #region validate
/** ValidateTracingConfiguration: field errors, `<path>: Invalid value: <v>: <why>`, as field.Invalid prints them. */
export function validateTracingConfiguration(c: TracingConfiguration, path = "tracing"): string[] {
  const errs: string[] = [];
  const rate = c.samplingRatePerMillion;
  if (rate !== undefined) {
    if (!Number.isInteger(rate))
      errs.push(`${path}.samplingRatePerMillion: Invalid value: ${JSON.stringify(rate)}: must be an integer`);
    else if (rate < 0)
      errs.push(`${path}.samplingRatePerMillion: Invalid value: ${rate}: sampling rate must be positive`);
    else if (rate > maxSamplingRatePerMillion)
      errs.push(
        `${path}.samplingRatePerMillion: Invalid value: ${rate}: sampling rate per million must be less than or equal to one million`,
      );
  }
  if (c.endpoint !== undefined) {
    try {
      exportURL(c.endpoint);
    } catch (e) {
      errs.push(`${path}.endpoint: Invalid value: "${c.endpoint}": ${(e as Error).message}`);
    }
  }
  return errs;
}
// #endregion validate

/** The URL spans are POSTed to: `host:port` → `http://host:port/v1/traces`; a URL with no path gets `/v1/traces`. */
export function exportURL(endpoint: string = defaultEndpoint): string {
  const withScheme = endpoint.includes("//") ? endpoint : `http://${endpoint}`;
  const url = new URL(withScheme);
  if (url.protocol !== "http:" && url.protocol !== "https:")
    throw new Error(
      `unsupported scheme: ${url.protocol.replace(/:$/, "")}. Options are http and https (OTLP/HTTP)`,
    );
  if (url.pathname === "/" || url.pathname === "") url.pathname = "/v1/traces";
  return url.toString();
}

/** The `tracing` part of a parsed document (the kubelet's field, or the file's body), checked. */
export function tracingFromObject(obj: unknown, path = "tracing"): TracingConfiguration {
  if (obj === null || typeof obj !== "object") throw new TracingConfigError(`${path}: must be an object`);
  const { endpoint, samplingRatePerMillion } = obj as Record<string, unknown>;
  if (endpoint !== undefined && typeof endpoint !== "string")
    throw new TracingConfigError(
      `${path}.endpoint: Invalid value: ${JSON.stringify(endpoint)}: must be a string`,
    );
  const c: TracingConfiguration = {
    endpoint: endpoint as string | undefined,
    samplingRatePerMillion: samplingRatePerMillion as number | undefined,
  };
  const errs = validateTracingConfiguration(c, path);
  if (errs.length) throw new TracingConfigError(errs.join("; "));
  return c;
}

// #region read-file
/** ReadTracingConfiguration: `--tracing-config-file`, an apiserver.config.k8s.io TracingConfiguration. */
export function readTracingConfiguration(file: string): TracingConfiguration {
  let text: string;
  try {
    text = readFileSync(file, "utf8");
  } catch (e) {
    throw new TracingConfigError(
      `unable to read tracing configuration from "${file}": ${(e as Error).message}`,
    );
  }
  let doc: unknown;
  try {
    doc = parse(text);
  } catch (e) {
    throw new TracingConfigError(`unable to decode tracing configuration data: ${(e as Error).message}`);
  }
  const { apiVersion, kind, ...rest } = (doc ?? {}) as Record<string, unknown>;
  if (kind !== "TracingConfiguration" || !apiVersions.includes(String(apiVersion)))
    throw new TracingConfigError(
      `unable to decode tracing configuration data: no kind "${String(kind)}" is registered for version "${String(apiVersion)}"; want TracingConfiguration in ${apiVersions.join(" or ")}`,
    );
  return tracingFromObject(rest, "tracing");
}
// #endregion read-file
