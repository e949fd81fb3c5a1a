// Mistake: a liveness probe and no startup probe. Plausible — "liveness restarts it when it is
// dead, readiness keeps traffic away until it is up" — but liveness runs from the first second:
// while the app is still starting, /healthz refuses every connection, three failures two seconds
// apart kill it after ~6 s, it starts again from zero, and never gets to listen (CrashLoopBackOff).
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
  return {
    livenessProbe: { httpGet: { path: "/healthz", port: app.port }, periodSeconds: 2, failureThreshold: 3 },
    readinessProbe: { httpGet: { path: "/readyz", port: app.port }, periodSeconds: 1, failureThreshold: 2 },
  };
}
