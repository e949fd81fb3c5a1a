// Exercise 8.1, the reference answer: three probes, three questions.
// - startupProbe: "has it started yet?" — polled often, with a budget (failureThreshold ×
//   periodSeconds) well above the start delay; liveness and readiness wait until it succeeds.
// - livenessProbe: "is it still alive?" — after start-up, failureThreshold × periodSeconds small
//   enough that a hung app is noticed, killed and restarted inside the bound.
// - readinessProbe: "may it take traffic now?" — its own endpoint, quick to react both ways.
// Upstream: https://kubernetes.io/docs/tasks/configure-pod-container/configure-liveness-readiness-startup-probes/
// ("Protect slow starting containers with startup probes").
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
  // Detecting a hang takes up to failureThreshold × periodSeconds (+ the probe's timeout); the
  // kill and the restart take time too, so detection gets at most half the bound.
  const livenessPeriod = Math.max(1, Math.floor(app.restartWithinSeconds / 6));
  return {
    startupProbe: {
      ...healthz,
      periodSeconds: 1,
      // The worst start, not the usual one: three times the delay, and ten seconds more.
      failureThreshold: app.startDelaySeconds * 3 + 10,
    },
    livenessProbe: { ...healthz, periodSeconds: livenessPeriod, failureThreshold: 3 },
    readinessProbe: {
      httpGet: { path: "/readyz", port: app.port },
      periodSeconds: 1,
      failureThreshold: 2,
    },
  };
}
