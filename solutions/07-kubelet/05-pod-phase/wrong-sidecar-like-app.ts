// Mistake: sidecars (init containers with restartPolicy Always) are counted like app containers,
// so their exit code decides Succeeded or Failed. Plausible: they run beside the app for the whole
// life of the pod. But the kubelet stops a sidecar itself once the app containers are done (SIGTERM,
// exit 143): upstream ignores a terminated sidecar, or every Job with a sidecar would fail.
import type { ContainerStatus, Pod, PodPhase } from "../../../code/api/core.ts";

export function getPhase(pod: Pod, info: ContainerStatus[], podIsTerminal: boolean): PodPhase {
  const statusOf = (name: string) => info.find((s) => s.name === name);
  const inits = pod.spec.initContainers ?? [];
  const isSidecar = (c: { restartPolicy?: string }) => c.restartPolicy === "Always";
  let pendingInit = 0;
  let failedInit = 0;
  let unknown = 0;
  let running = 0;
  let waiting = 0;
  let stopped = 0;
  let succeeded = 0;

  // Regular init containers: each must have exited 0.
  for (const c of inits.filter((c) => !isSidecar(c))) {
    const st = statusOf(c.name);
    const state = st?.state;
    const exit =
      state?.terminated?.exitCode ?? (state?.waiting ? st?.lastState?.terminated?.exitCode : undefined);
    if (state?.running || exit === undefined) pendingInit++;
    else if (exit !== 0) failedInit++;
  }

  // Sidecars: running counts (pending until started); an exited one decides nothing.
  for (const c of inits.filter(isSidecar)) {
    const st = statusOf(c.name);
    if (!st) {
      unknown++;
      continue;
    }
    const state = st.state ?? {};
    if (state.running) {
      running++;
      if (!st.started) pendingInit++;
    } else if (state.terminated) {
      stopped++;
      if (state.terminated.exitCode === 0) succeeded++;
    } else if (state.waiting) {
      if (!st.lastState?.terminated) {
        pendingInit++;
        waiting++;
      }
    } else {
      pendingInit++;
      unknown++;
    }
  }

  // App containers.
  for (const c of pod.spec.containers) {
    const st = statusOf(c.name);
    const state = st?.state;
    if (!st || !state) unknown++;
    else if (state.running) running++;
    else if (state.terminated) {
      stopped++;
      if (state.terminated.exitCode === 0) succeeded++;
    } else if (state.waiting) {
      // Waiting to be restarted after a run (CrashLoopBackOff) is a stopped container.
      if (st.lastState?.terminated) stopped++;
      else waiting++;
    } else unknown++;
  }

  const policy = pod.spec.restartPolicy ?? "Always";
  if (failedInit > 0 && policy === "Never") return "Failed";
  const appStarted = pod.spec.containers.some((c) => {
    const st = statusOf(c.name);
    return st?.state?.running !== undefined || st?.state?.terminated !== undefined;
  });
  if ((pendingInit > 0 && !appStarted) || waiting > 0) return "Pending";
  if (running > 0 && unknown === 0) return "Running";
  if (running === 0 && stopped > 0 && unknown === 0) {
    const source = pod.metadata.annotations?.["kubernetes.io/config.source"];
    const isStatic = source !== undefined && source !== "api";
    if (podIsTerminal && !isStatic) return stopped === succeeded ? "Succeeded" : "Failed";
    if (policy === "Always") return "Running";
    if (stopped === succeeded) return "Succeeded";
    if (policy === "Never") return "Failed";
    return "Running";
  }
  return "Pending";
}
