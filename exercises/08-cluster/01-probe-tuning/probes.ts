// Exercise 8.1: the probes of a slow-starting app, graded in the live cluster. See README.md.
import type { Probe } from "../../../code/api/core.ts";

/** What you know about the app (course/web): when it listens, and how fast a hang must be cured. */
export interface AppTimings {
  /** The port it serves /healthz (liveness) and /readyz (readiness) on. */
  port: number;
  /** It listens only this many seconds after it starts (a slow start: caches, migrations…). */
  startDelaySeconds: number;
  /** Once it hangs (/healthz answers 500), the kubelet must restart it within this many seconds. */
  restartWithinSeconds: number;
}

/** The probes of the app's container, as they go into the pod's spec. */
export interface ContainerProbes {
  startupProbe?: Probe;
  livenessProbe?: Probe;
  readinessProbe?: Probe;
}

export function probesFor(app: AppTimings): ContainerProbes {
  throw new Error(`TODO: the probes for an app on :${app.port} that starts in ${app.startDelaySeconds} s`);
}
