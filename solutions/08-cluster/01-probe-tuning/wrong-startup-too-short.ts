// Mistake: a startup probe whose budget — failureThreshold × periodSeconds = 5 × 1 s — is shorter
// than the start delay. It looks careful (a startup probe, polled every second), but a startup
// probe that runs out of failures kills the container just as a liveness probe does: the app is
// killed at 5 s, restarted, killed again, and never listens.
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
    startupProbe: { ...healthz, periodSeconds: 1, failureThreshold: 5 },
    livenessProbe: { ...healthz, periodSeconds: 2, failureThreshold: 3 },
    readinessProbe: { httpGet: { path: "/readyz", port: app.port }, periodSeconds: 1, failureThreshold: 2 },
  };
}
