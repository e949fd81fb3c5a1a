// Mistake: a liveness probe so lax that a hung app is never restarted in time — every 10 s, 10
// failures: 100 s of a dead app taking (and failing) requests. Plausible after being burnt by a
// liveness probe that killed a slow app; but the startup probe already protects the start, so
// liveness can be strict: failureThreshold × periodSeconds must fit inside the restart bound.
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
    livenessProbe: { ...healthz, periodSeconds: 10, failureThreshold: 10 },
    readinessProbe: { httpGet: { path: "/readyz", port: app.port }, periodSeconds: 1, failureThreshold: 2 },
  };
}
