/**
 * pods/log — `GET …/pods/web/log?container=&follow=&tailLines=…`: the API server validates the
 * options, finds the pod's node and streams the answer of that node's kubelet
 * (`/containerLogs/{ns}/{pod}/{container}`) back to the client.
 * Mirrors kubernetes/kubernetes pkg/registry/core/pod/rest/log.go.
 *
 * Solves: `kubectl logs` talks only to the API server, yet the log lives in a file on the node;
 * the API server is the one place that can check who may read it (RBAC on `pods/log`), which
 * container is meant, and where the pod runs — then it forwards, holding the stream open while
 * the kubelet follows the file.
 *
 * Invariants:
 * - options are validated first, with upstream's field errors (422 `PodLogOptions "web" is
 *   invalid`: tailLines `must be greater than or equal to 0`, limitBytes and sinceSeconds `must
 *   be greater than 0`, and at most one of sinceTime and sinceSeconds);
 * - no container named and several in the pod is a 400 `a container name must be specified for
 *   pod web, choose one of: [a b]`; a name not in the pod a 400 `container c is not valid for
 *   pod web`;
 * - a pod without a node answers 204 No Content, as upstream's nil location does (a pod's node
 *   that has no Node object is a 404 `nodes "n1" not found`);
 * - the kubelet's errors keep their meaning: its 400 text becomes a BadRequest, its 500 an
 *   InternalError, anything else a generic Status for `pods/log`; a kubelet that cannot be
 *   reached is a 500 with Go's dial error text;
 * - a follow ends when either side ends: the kubelet's body ending ends the response, the
 *   client going away aborts the request to the kubelet.
 *
 * What upstream does differently: `insecureSkipTLSVerifyBackend` picks a transport that does not
 * verify the kubelet; here the kubelet is verified only when `--kubelet-certificate-authority`
 * is given, whatever the option says.
 *
 * @upstream kubernetes/kubernetes pkg/registry/core/pod/rest/log.go (LogREST.Get)
 * @upstream kubernetes/kubernetes pkg/registry/core/pod/strategy.go (LogLocation, validateContainer)
 * @upstream kubernetes/kubernetes pkg/apis/core/validation/validation.go (ValidatePodLogOptions)
 * @upstream kubernetes/kubernetes staging/src/k8s.io/apiserver/pkg/registry/generic/rest/streamer.go (LocationStreamer)
 * @upstream kubernetes/kubernetes staging/src/k8s.io/apiserver/pkg/registry/generic/rest/response_checker.go (GenericHttpResponseChecker)
 * @chapter 07-kubelet
 */
import type { IncomingMessage, ServerResponse } from "node:http";
import type { Pod } from "../../../api/core.ts";
import { type FieldError, forbidden, invalid } from "../../../api/field-errors.ts";
import {
  isStatusError,
  newBadRequest,
  newGenericServerResponse,
  newInternalError,
  newInvalid,
  newNotFound,
  type StatusError,
} from "../../errors.ts";
import type { Store } from "../store.ts";
import {
  getConnectionInfo,
  getFromKubelet,
  type KubeletClientConfig,
  locationURL,
} from "./kubelet-client.ts";

/** v1.PodLogOptions as the query carries it. */
export interface PodLogOptions {
  container?: string;
  follow?: boolean;
  previous?: boolean;
  timestamps?: boolean;
  sinceSeconds?: number;
  sinceTime?: string;
  tailLines?: number;
  limitBytes?: number;
}

/** The query decoded as upstream's parameter codec does (strconv's errors as 400s). */
export function podLogOptionsFromQuery(q: URLSearchParams): PodLogOptions {
  const bool = (name: string): boolean | undefined => {
    const v = q.get(name);
    if (v === null || v === "") return undefined;
    if (["1", "t", "T", "TRUE", "true", "True"].includes(v)) return true;
    if (["0", "f", "F", "FALSE", "false", "False"].includes(v)) return false;
    throw newBadRequest(`strconv.ParseBool: parsing "${v}": invalid syntax`);
  };
  const int = (name: string): number | undefined => {
    const v = q.get(name);
    if (v === null || v === "") return undefined;
    if (!/^[+-]?\d+$/.test(v)) throw newBadRequest(`strconv.ParseInt: parsing "${v}": invalid syntax`);
    return Number(v);
  };
  const sinceTime = q.get("sinceTime") || undefined;
  if (sinceTime !== undefined && Number.isNaN(Date.parse(sinceTime)))
    throw newBadRequest(`parsing time "${sinceTime}" as "2006-01-02T15:04:05Z07:00": cannot parse`);
  return {
    container: q.get("container") || undefined,
    follow: bool("follow"),
    previous: bool("previous"),
    timestamps: bool("timestamps"),
    sinceSeconds: int("sinceSeconds"),
    sinceTime,
    tailLines: int("tailLines"),
    limitBytes: int("limitBytes"),
  };
}

/** ValidatePodLogOptions. */
export function validatePodLogOptions(opts: PodLogOptions): FieldError[] {
  const errs: FieldError[] = [];
  if (opts.tailLines !== undefined && opts.tailLines < 0)
    errs.push(invalid("tailLines", opts.tailLines, "must be greater than or equal to 0"));
  if (opts.limitBytes !== undefined && opts.limitBytes < 1)
    errs.push(invalid("limitBytes", opts.limitBytes, "must be greater than 0"));
  if (opts.sinceSeconds !== undefined && opts.sinceTime !== undefined)
    errs.push(forbidden("", "at most one of `sinceTime` or `sinceSeconds` may be specified"));
  else if (opts.sinceSeconds !== undefined && opts.sinceSeconds < 1)
    errs.push(invalid("sinceSeconds", opts.sinceSeconds, "must be greater than 0"));
  return errs;
}

// #region log-location
/** validateContainer: the container named, or the pod's only one. */
export function validateContainer(container: string | undefined, pod: Pod): string {
  const spec = pod.spec as
    | {
        containers?: { name: string }[];
        initContainers?: { name: string }[];
        ephemeralContainers?: { name: string }[];
      }
    | undefined;
  const containers = spec?.containers ?? [];
  const all = [...(spec?.initContainers ?? []), ...containers, ...(spec?.ephemeralContainers ?? [])].map(
    (c) => c.name,
  );
  const name = pod.metadata.name;
  if (!container) {
    if (containers.length === 1) return (containers[0] as { name: string }).name;
    if (containers.length === 0) throw newBadRequest(`a container name must be specified for pod ${name}`);
    throw newBadRequest(
      `a container name must be specified for pod ${name}, choose one of: [${all.join(" ")}]`,
    );
  }
  if (!all.includes(container)) throw newBadRequest(`container ${container} is not valid for pod ${name}`);
  return container;
}

/** The pod, or upstream's 404 for it. */
export async function getPod(pods: Store, namespace: string, name: string): Promise<Pod> {
  try {
    return (await pods.get(namespace, name)) as Pod;
  } catch (e) {
    if (isStatusError(e) && e.code === 404) throw newNotFound({ group: "", resource: "pods" }, name);
    throw e;
  }
}

/**
 * LogLocation: the kubelet URL that serves this container's log, or undefined for a pod not yet
 * on a node (upstream's nil location: no error, no stream). The container is checked first.
 */
export async function logLocation(
  pods: Store,
  nodes: Store,
  config: KubeletClientConfig,
  namespace: string,
  name: string,
  opts: PodLogOptions,
): Promise<URL | undefined> {
  const pod = await getPod(pods, namespace, name);
  const container = validateContainer(opts.container, pod);
  const nodeName = (pod.spec as { nodeName?: string } | undefined)?.nodeName;
  if (!nodeName) return undefined;
  const info = await getConnectionInfo(nodes, nodeName, config);
  const params = new URLSearchParams();
  if (opts.follow) params.set("follow", "true");
  if (opts.previous) params.set("previous", "true");
  if (opts.timestamps) params.set("timestamps", "true");
  if (opts.sinceSeconds !== undefined) params.set("sinceSeconds", String(opts.sinceSeconds));
  if (opts.sinceTime !== undefined)
    params.set("sinceTime", new Date(opts.sinceTime).toISOString().replace(/\.\d+Z$/, "Z"));
  if (opts.tailLines !== undefined) params.set("tailLines", String(opts.tailLines));
  if (opts.limitBytes !== undefined) params.set("limitBytes", String(opts.limitBytes));
  const path = `/containerLogs/${encodeURIComponent(namespace)}/${encodeURIComponent(name)}/${encodeURIComponent(container)}`;
  return locationURL(info, path, params);
}
// #endregion log-location

/** GenericHttpResponseChecker: the kubelet's non-2xx answer as a Status. */
async function checkResponse(resp: IncomingMessage, name: string): Promise<StatusError | undefined> {
  const code = resp.statusCode ?? 500;
  if (code >= 200 && code <= 206) return undefined;
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of resp as AsyncIterable<Buffer>) {
    if (size < 50_000) chunks.push(chunk);
    size += chunk.length;
  }
  const body = Buffer.concat(chunks).subarray(0, 50_000).toString();
  if (code === 500) return newInternalError(body);
  if (code === 400) return newBadRequest(body);
  return newGenericServerResponse(code, "", { group: "", resource: "pods/log" }, name, body, 0, false);
}

// #region stream-log
/** LogREST.Get and the LocationStreamer: validate, locate, then pass the kubelet's body through. */
export async function streamPodLog(
  pods: Store,
  nodes: Store,
  config: KubeletClientConfig,
  namespace: string,
  name: string,
  query: URLSearchParams,
  res: ServerResponse,
): Promise<void> {
  const opts = podLogOptionsFromQuery(query);
  const errs = validatePodLogOptions(opts);
  if (errs.length > 0) throw newInvalid("", "PodLogOptions", name, errs);
  const location = await logLocation(pods, nodes, config, namespace, name, opts);
  if (!location) {
    // StreamObject: no stream (no node yet) is 204 No Content.
    res.writeHead(204);
    res.end();
    return;
  }
  const abort = new AbortController();
  const onClose = () => abort.abort();
  res.on("close", onClose);
  const { response } = getFromKubelet(location, config, abort.signal);
  const upstream = await response;
  const failed = await checkResponse(upstream, name);
  if (failed) throw failed;
  res.writeHead(200, { "Content-Type": "text/plain", "Transfer-Encoding": "chunked" });
  await new Promise<void>((resolve) => {
    upstream.on("data", (chunk: Buffer) => {
      // Backpressure: a slow client slows the read from the kubelet.
      if (!res.write(chunk)) {
        upstream.pause();
        res.once("drain", () => upstream.resume());
      }
    });
    upstream.once("end", () => {
      res.end();
      resolve();
    });
    upstream.once("error", () => {
      res.destroy();
      resolve();
    });
    upstream.once("aborted", () => resolve());
    res.once("close", () => {
      upstream.destroy();
      resolve();
    });
  });
  res.off("close", onClose);
}
// #endregion stream-log
