// Mistake: startup and liveness probes, no readiness probe. Start-up looks right — a container
// with a startup probe is not Ready until that probe succeeds — but afterwards nothing asks the
// app whether it can take traffic: when /readyz says 503 (a dependency down, a cache reloading),
// the pod stays Ready and its Service keeps sending it requests it cannot serve.
import type { Probe } from "../../../code/api/core.ts";

export interface AppTimings {
  port: number;
  startDelaySeconds: number;
  restartWithinSeconds: number;
}

export interface ContainerProbes {
  startupProbe?: Probe;
  livenessProbe?: Probe;
  readinessProbe?: Probe;
}

export function probesFor(app: AppTimings): ContainerProbes {
  const healthz = { httpGet: { path: "/healthz", port: app.port } };
  return {
    startupProbe: { ...healthz, periodSeconds: 1, failureThreshold: app.startDelaySeconds * 3 + 10 },
    livenessProbe: { ...healthz, periodSeconds: 2, failureThreshold: 3 },
  };
}
