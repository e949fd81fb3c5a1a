/**
 * The CRI calls as spans — `runtime.v1.RuntimeService/CreateContainer`, `…/StartContainer`,
 * `runtime.v1.ImageService/PullImage` …, named as the gRPC methods they are upstream, children of
 * the `syncPod` span that made them. Upstream: the kubelet's remote CRI clients add
 * OpenTelemetry's gRPC client interceptor when KubeletTracing is on (cri/remote/remote_runtime.go,
 * remote_image.go), so every CRI call is a client span of the kubelet's trace.
 *
 * Solves: a pod's timeline shows when its sandbox was made, its image pulled and each container
 * created and started — the runtime's share of the pod's startup, which no API object records
 * with this precision (a container's `startedAt` is in whole seconds).
 *
 * Invariants: the runtime is wrapped only when tracing is on; a call outside a traced sync
 * (a probe's ExecSync, the PLEG's relist) records nothing, as `withSpan` nests only under a span.
 *
 * What upstream does differently: our runtimes run in the kubelet's process, not behind gRPC; the
 * span names are those otelgrpc gives the methods, with the pod and container as attributes
 * (upstream's gRPC spans carry only rpc.* attributes).
 *
 * @upstream kubernetes/kubernetes pkg/kubelet/cri/remote/remote_runtime.go (NewRemoteRuntimeService: otelgrpc.UnaryClientInterceptor with the TracerProvider)
 * @upstream kubernetes/kubernetes pkg/kubelet/cri/remote/remote_image.go (NewRemoteImageService: the same for images)
 * @chapter 08-cluster
 */
import type { Attributes } from "@opentelemetry/api";
import { withSpan } from "../../tracing/tracing.ts";
import type { ImageManagerService, PodSandboxConfig, RuntimeService } from "./cri.ts";

const rpc = (service: string, method: string): Attributes => ({
  "rpc.system": "grpc",
  "rpc.service": service,
  "rpc.method": method,
});

/** The sandbox's pod: the CRI metadata carries its name, namespace and uid. */
const sandboxPod = (c?: PodSandboxConfig): Attributes =>
  c
    ? {
        "k8s.pod.uid": c.metadata.uid,
        "k8s.pod.name": c.metadata.name,
        "k8s.namespace.name": c.metadata.namespace,
      }
    : {};

/** `target` with some methods replaced; every other call goes to `target` itself (its `this`). */
function overriding<T extends object>(target: T, methods: Partial<T>): T {
  return new Proxy(target, {
    get(t, prop) {
      if (Object.hasOwn(methods, prop)) return methods[prop as keyof T];
      const v = Reflect.get(t, prop, t);
      return typeof v === "function" ? v.bind(t) : v;
    },
  });
}

// #region traced-runtime
/** The runtime service with its pod-startup calls as spans. */
export function tracedRuntimeService(rs: RuntimeService): RuntimeService {
  const svc = "runtime.v1.RuntimeService";
  return overriding<RuntimeService>(rs, {
    RunPodSandbox: (config: PodSandboxConfig, handler?: string) =>
      withSpan(
        `${svc}/RunPodSandbox`,
        () => ({ ...rpc(svc, "RunPodSandbox"), ...sandboxPod(config) }),
        () => rs.RunPodSandbox(config, handler),
      ),
    CreateContainer: (...a: Parameters<RuntimeService["CreateContainer"]>) =>
      withSpan(
        `${svc}/CreateContainer`,
        () => ({
          ...rpc(svc, "CreateContainer"),
          ...sandboxPod(a[2]),
          "k8s.container.name": a[1].metadata.name,
        }),
        () => rs.CreateContainer(...a),
      ),
    StartContainer: (id: string) =>
      withSpan(
        `${svc}/StartContainer`,
        () => ({ ...rpc(svc, "StartContainer"), "container.id": id }),
        () => rs.StartContainer(id),
      ),
    StopContainer: (id: string, timeout: number) =>
      withSpan(
        `${svc}/StopContainer`,
        () => ({ ...rpc(svc, "StopContainer"), "container.id": id }),
        () => rs.StopContainer(id, timeout),
      ),
  });
}

/** The image service with its pulls as spans. */
export function tracedImageService(is: ImageManagerService): ImageManagerService {
  const svc = "runtime.v1.ImageService";
  return overriding<ImageManagerService>(is, {
    PullImage: (...a: Parameters<ImageManagerService["PullImage"]>) =>
      withSpan(
        `${svc}/PullImage`,
        () => ({ ...rpc(svc, "PullImage"), ...sandboxPod(a[1]), "container.image.name": a[0].image }),
        () => is.PullImage(...a),
      ),
  });
}
// #endregion traced-runtime
